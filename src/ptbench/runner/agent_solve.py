"""The solve stage's agent runs: sandbox, redacted log, traces, failure classification, continuations.

One call of `solve()` runs the trial's agent until it is done or its budget is spent:
  1. build the launch (scoped env, private HOME, files) and wrap it in the campaign's sandbox;
  2. run it under the watchdog, its output piped through redaction into agent/native.log;
  3. remove copied login files, scrub the HOME and workspace of known secrets, parse the log into
     agent/trajectory.json + agent/usage.json, classify a failure into agent/failure.json;
  4. if the agent quit with more than `continue_if_minutes_left` of budget left (and the campaign
     allows continuations), continue its session, telling it the time left.
A restarted job (requeue) continues the session the same way, with the time really left.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from ptbench.agents.agent_run import AgentRun
from ptbench.agents.failures import FailureInfo, classify
from ptbench.agents.launcher import Launch, build_launch
from ptbench.agents.redact import RedactingPump, Redactor, scrub_tree
from ptbench.agents.rehearsal import rehearsal_options, rehearsal_provider
from ptbench.agents.traces import RUN_MARKER_KEY, Trajectory, write_traces
from ptbench.core.errors import UserError
from ptbench.core.files import atomic_write_json
from ptbench.launch.solve_launch import SolveLaunch, sandbox_dirs
from ptbench.launch.trial_gateway import TrialGateway, trial_gateway
from ptbench.node.cgroup import TrialCgroup
from ptbench.runner.cache_layer import cache_layer
from ptbench.runner.journal import run_journal
from ptbench.runner.watchdog import SolveOutcome, Watchdog
from ptbench.runner.workspace import write_deadline
from ptbench.sandbox.auto import resolve_sandbox
from ptbench.sandbox.network import resolve_network
from ptbench.sandbox.request import sandbox_facts
from ptbench.trial import TrialDir, TrialState

DEFAULT_CONTINUE_MINUTES = 10.0


@dataclass
class SolveResult:
    outcome: SolveOutcome | None  # the last run's; None if no run happened
    failure: FailureInfo | None
    continuations: int


def _time_text(seconds: float) -> str:
    minutes = max(0, int(seconds // 60))
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


def continuation_message(trial: TrialDir, seconds_left: float, reason: str) -> str:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ptbench.agents", "templates"), undefined=jinja2.StrictUndefined
    )
    return (
        env.get_template("continue.md.j2")
        .render(reason=reason, time_left=_time_text(seconds_left), workspace=str(trial.workspace))
        .strip()
    )


@contextmanager
def solve_launch(run: AgentRun, *, provider_url: str, rehearsal: bool) -> Iterator[SolveLaunch]:
    """The stage's launch: the sandbox resolved first (an unusable `auto` stops the trial before a key is
    read), then the gateway, the cache layer and the journal, each held open until the stage ends."""
    trial, spec = run.trial, run.spec
    sandbox = resolve_sandbox(trial.spec.sandbox)
    scratch = sandbox_dirs(trial)[0].parent
    with (
        trial_gateway(run) as gateway,
        cache_layer(trial.hf_layer, sandbox) as cache,
        run_journal(
            trial,
            sandbox,
            cache_upper=cache.upper if cache else None,
            extra=[Path(p) for p in trial.spec.sandbox_options.get("writable", [])],
            private=[] if rehearsal else [trial.home / d for d in spec.auth_files],
        ) as journal,
    ):
        network = resolve_network(
            sandbox,
            trial.spec.sandbox_options,
            gateway=gateway is not None and gateway.socket_path is not None,
            agent=f"agent '{spec.name}'",
        )
        trial.event("sandbox_view", network=network, hf_cache=cache.to_json() if cache else None)
        base_url = gateway.base_url if gateway else provider_url
        yield SolveLaunch(sandbox, network, base_url, scratch, cache=cache, gateway=gateway, journal=journal)


def solve(trial: TrialDir, state: TrialState, set_watchdog: Callable[[Watchdog | None], None]) -> SolveResult:
    rehearsal = rehearsal_options(trial)
    budget = trial.spec.budget
    with rehearsal_provider(trial, rehearsal) if rehearsal is not None else nullcontext("") as provider_url:
        run = AgentRun.resolve(trial, rehearsal_url=provider_url)  # once per solve: every run below shares it
        spec, session = run.spec, run.session
        min_left = float(run.options.get("continue_if_minutes_left", DEFAULT_CONTINUE_MINUTES)) * 60
        with solve_launch(run, provider_url=provider_url, rehearsal=rehearsal is not None) as setup:
            outcome: SolveOutcome | None = None
            failure: FailureInfo | None = None
            while True:
                left = budget.seconds - state.solve_seconds_used
                if left <= 0:
                    break
                if outcome is None:  # first run of this attempt: a fresh start, or a restarted job
                    reason = "restart" if state.solve_runs > 0 else "start"
                else:
                    reason = "continue"
                resume = reason != "start" and bool(session.session_id) and bool(spec.continue_command)
                if reason == "start" or not resume:
                    prompt = trial.prompt_txt.read_text() if spec.uses_prompt and trial.prompt_txt.exists() else ""
                else:
                    prompt = continuation_message(trial, left, reason)
                outcome, traj, failure = _run_once(
                    run, state, setup, set_watchdog, prompt=prompt, resume=resume, mode=reason if resume else "start"
                )
                session.session_id = traj.session_id or session.session_id
                session.runs += 1
                session.cli_version = spec.version
                session.trace_format = spec.trace_format
                if outcome.interrupted or outcome.timed_out:
                    run.save_session()
                    break
                left_now = budget.seconds - state.solve_seconds_used
                can_continue = (
                    (failure is None or failure.retryable) and bool(spec.continue_command) and bool(session.session_id)
                )
                if can_continue and session.continuations < trial.spec.max_continuations and left_now > min_left:
                    session.continuations += 1
                    run.save_session()
                    trial.event(
                        "continuing",
                        continuation=session.continuations,
                        seconds_left=round(left_now, 1),
                        after=failure.kind if failure else "exit 0",
                    )
                    continue
                run.save_session()
                break
    return SolveResult(outcome, failure, session.continuations)


def _run_once(
    run: AgentRun,
    state: TrialState,
    setup: SolveLaunch,
    set_watchdog: Callable[[Watchdog | None], None],
    *,
    prompt: str,
    resume: bool,
    mode: str,
) -> tuple[SolveOutcome, Trajectory, FailureInfo | None]:
    trial, spec = run.trial, run.spec
    budget = trial.spec.budget
    left = budget.seconds - state.solve_seconds_used
    gateway, journal = setup.gateway, setup.journal
    credentials = run.credentials
    if problem := run.credential_problem():  # planned before this check, or agent.yaml edited since: fail closed
        raise UserError(problem)
    launch = build_launch(
        run,
        prompt=prompt,
        resume=resume,
        base_url=setup.base_url,
        gateway_token=gateway.token if gateway else "",
        extra_env=gateway.agent_env() if gateway else None,
    )
    redactor = Redactor({**launch.secrets, **(gateway.real_keys if gateway else {})})
    pump = None
    cgroup: TrialCgroup | None = None
    try:  # from here on login files exist in the trial's HOME: they must go whatever happens
        command = setup.command(run, launch)
        cgroup, why = TrialCgroup.create(str(trial.path))
        containment = "cgroup.kill" if cgroup is not None else "subreaper"
        trial.event("containment", mechanism=containment, cgroup=str(cgroup.path) if cgroup else None, why=why or None)
        _write_launch_record(
            trial, launch, command.argv, prompt, redactor, mode, setup, containment=containment, credentials=credentials
        )
        write_deadline(trial, left)
        log_path = trial.agent_dir / "native.log"
        run_number = state.solve_runs + 1
        with open(log_path, "ab") as fh:  # the marker separates runs for the trace parser
            fh.write((json.dumps({RUN_MARKER_KEY: run_number, "mode": mode, "time": time.time()}) + "\n").encode())
        used_before = state.solve_seconds_used

        def on_tick(elapsed: float) -> None:
            state.solve_seconds_used = used_before + elapsed
            trial.save_state(state)

        watchdog = Watchdog(
            seconds_left=left,
            grace_seconds=budget.grace_seconds,
            warn_before=min(budget.warn_before, left),
            on_tick=on_tick,
            on_event=trial.event,
            on_resume=lambda left: write_deadline(trial, left),
            cgroup=cgroup,
        )
        state.solve_runs += 1
        trial.save_state(state)
        pump = RedactingPump(log_path, redactor)
        set_watchdog(watchdog)
        outcome = watchdog.run(
            command.argv, cwd=str(command.cwd), env=command.env, stdout=pump.write_fd, stderr=pump.write_fd
        )
    finally:
        set_watchdog(None)
        if cgroup is not None:  # emptied and removed by the watchdog; not if a failure came before it ran
            cgroup.kill_and_remove()
        # The runner's signal handlers only set flags, so a stop arriving now cannot cut this short.
        if pump is not None:
            pump.join()
        for f in launch.copied_auth_files:
            f.unlink(missing_ok=True)
        if journal is not None:  # its copies hold what the agent's files held: secrets are scrubbed there too
            journal.flush()
        scrubbed = scrub_tree(trial.home, redactor) + scrub_tree(trial.workspace, redactor, max_bytes=16 * 1024 * 1024)
        if journal is not None:
            scrubbed += scrub_tree(journal.objects, redactor)
        if scrubbed:
            trial.event("secrets_scrubbed", files=[str(p.relative_to(trial.path)) for p in scrubbed][:20])
    traj = write_traces(trial.agent_dir, spec.trace_format, agent=spec.name, model=trial.spec.agent.model)
    tail = log_path.read_bytes()[-20000:].decode(errors="replace")
    failure = (
        None
        if outcome.timed_out or outcome.interrupted
        else classify(traj, tail, outcome.exit_code, patterns=spec.failure_patterns)
    )
    if gateway is not None:
        _gateway_usage(trial, gateway)
        cap = gateway.cost_cap_message()
        if cap is not None and not outcome.interrupted:  # the gateway knows why the agent stopped; no log guessing
            failure = FailureInfo("cost_cap", False, cap)
    if failure is not None:
        atomic_write_json(
            trial.agent_dir / "failure.json", {**failure.to_json(), "run": run_number, "exit_code": outcome.exit_code}
        )
        trial.event("agent_failure", kind=failure.kind, retryable=failure.retryable, message=failure.message[:300])
    else:
        (trial.agent_dir / "failure.json").unlink(missing_ok=True)
    return outcome, traj, failure


def _gateway_usage(trial: TrialDir, gateway: TrialGateway) -> None:
    """agent/usage.json: the gateway's counts are authoritative (the same for every CLI); the CLI's own beside them."""
    path = trial.agent_dir / "usage.json"
    try:
        cli = json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        cli = {}
    totals = gateway.totals()
    agent = totals["agent"]
    usage = {
        **cli,
        **{k: agent[k] for k in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")},
        "total_tokens": agent["input_tokens"] + agent["output_tokens"],
        "calls": agent["calls"],
        "cost_usd": agent["cost_usd"],
        "source": "gateway",
        "gateway": totals,
        "cli_reported": {k: v for k, v in cli.items() if k.endswith("_tokens") or k == "cost_usd"},
    }
    atomic_write_json(path, usage)


def sandbox_used(trial: TrialDir) -> str:
    """The sandbox the agent really ran in (agent/launch.json), for the result; "unknown" if it never ran.
    Where the campaign's sandbox does not isolate, the agent could have rewritten that file: the
    campaign's own word (trial.json as this process read it) is the answer."""
    if not sandbox_facts(trial.spec.sandbox).isolates:
        return trial.spec.sandbox
    try:
        return str(json.loads((trial.agent_dir / "launch.json").read_text())["sandbox"])
    except (OSError, ValueError, KeyError):
        return "unknown"


def launch_fact(trial: TrialDir, name: str) -> Any:
    """From agent/launch.json, for the result: `containment` (how the deadline reached every process of
    the agent's last run: cgroup.kill | subreaper), `credentials` (gateway | login | real_key | none),
    `network` (gateway | host), `hf_cache` ({mode: overlay | read-only | shared, reason})."""
    try:
        return json.loads((trial.agent_dir / "launch.json").read_text()).get(name)
    except (OSError, ValueError):
        return None


def _write_launch_record(
    trial: TrialDir,
    launch: Launch,
    argv: list[str],
    prompt: str,
    redactor: Redactor,
    mode: str,
    setup: SolveLaunch,
    *,
    containment: str,
    credentials: str,
) -> None:
    """agent/launch.json: the command (prompt elided, secrets redacted) and the names of the variables it got."""
    shown = ["<prompt>" if prompt and a == prompt else redactor.text(a) for a in argv]
    record = {
        "mode": mode,
        "argv": shown,
        "cwd": str(launch.cwd),
        "env_names": sorted(launch.env),
        "secret_names": sorted(k for k in launch.secrets if "#" not in k),
        **setup.record(),
        "containment": containment,
        "credentials": credentials,
        "python": sys.executable,
        "time": time.time(),
    }
    atomic_write_json(trial.agent_dir / "launch.json", record)
