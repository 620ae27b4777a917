"""The optional LLM judge: one of the agent CLIs, run by the harness after the agent, over a
read-only copy of the workspace and the trajectory, with a prompt shipped by ptbench.

The judge reads text the agent wrote, so it is started as the agent was (ptbench.launch): in the
trial's sandbox, its work folder the only tree it may write (under `bwrap`: never the trial's
checks, results or model), and, for a CLI behind the gateway, its model calls through a gateway
of its own, so the CLI holds a trial token and never the real key.

It also reads the gateway transcript (record/transcript.jsonl: every model call of the agent).
It works in `judge/` beside the trial's checks (never inside the agent's workspace), with its
own private HOME and its own wall-clock budget (`integrity.judge.minutes`), and must leave a
JSON verdict with a justification per question. A judge that cannot start, fails, runs out of
time or writes anything but a valid verdict is `unchecked`.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import jinja2
from pydantic import BaseModel, ValidationError

from ptbench.agents.agent_run import AgentRun
from ptbench.agents.launcher import build_launch
from ptbench.core.errors import UserError
from ptbench.core.jobenv import TRIAL_ENV_MARKER
from ptbench.core.procgroup import stop_group
from ptbench.integrity.checks import IntegrityCheck, register_check
from ptbench.integrity.context import CheckContext
from ptbench.integrity.report import Finding, Unchecked
from ptbench.launch.solve_launch import SolveLaunch, sandbox_dirs
from ptbench.launch.trial_gateway import trial_gateway
from ptbench.sandbox import SandboxCommand
from ptbench.sandbox.auto import resolve_sandbox
from ptbench.sandbox.network import resolve_network
from ptbench.spec.campaign import AgentRef, Budget, JudgeSettings
from ptbench.trial import TrialDir

VERDICT_FILE = "verdict.json"
_COPY_LIMIT = 50 << 20  # files above this (weights, big datasets) are listed, not copied
_WEIGHTS = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".gguf")


class Answer(BaseModel):
    verdict: Literal["clean", "flagged"]
    justification: str


class JudgeVerdict(BaseModel):
    contamination: Answer
    disallowed_model_use: Answer


def check(ctx: CheckContext, settings: JudgeSettings | None = None, work_name: str = "judge") -> Finding:
    """One judge (`integrity.judge` a mapping, or `settings`); a list of several goes to integrity.judges."""
    configured = settings or ctx.config.judge
    if configured is None:
        raise Unchecked("no integrity.judge settings")
    if isinstance(configured, list):
        if len(configured) > 1:
            from ptbench.integrity.judges import majority

            return majority(ctx, configured, check)
        configured = configured[0]
    settings = configured
    work = _fresh_dir(ctx.trial_dir / work_name)
    evidence = work / "workspace" / "evidence"
    skipped = _copy_evidence(ctx, evidence)
    spec = ctx.spec.model_copy(
        update={
            "trial_id": f"{ctx.spec.trial_id}.judge",
            "agent": AgentRef(name=settings.agent, model=settings.model, options=settings.options),
            "budget": Budget(hours=settings.minutes / 60, gpus=0),
            # the agent's extra writable paths are the agent's, not the judge's
            "sandbox_options": {k: v for k, v in ctx.spec.sandbox_options.items() if k != "writable"},
        }
    )
    for d in ("agent", "home/tmp"):
        (work / d).mkdir(parents=True, exist_ok=True)
    (work / "trial.json").write_text(spec.model_dump_json(indent=2))
    judge_trial = TrialDir(work)
    prompt = _prompt(
        ctx,
        has_trajectory=(evidence / "trajectory.json").exists(),
        has_transcript=(evidence / "transcript.jsonl").exists(),
    )
    (work / "prompt.txt").write_text(prompt)
    started = time.time()
    try:
        with _launch(AgentRun.resolve(judge_trial), prompt) as (command, secrets):
            rc = _run(command, secrets, work / "agent" / "native.log", settings.minutes * 60)
    except UserError as exc:
        raise Unchecked(f"judge could not start: {exc}") from None
    details = {
        "judge_agent": settings.agent,
        "judge_model": settings.model,
        "exit_code": rc,
        "seconds": round(time.time() - started, 1),
        "log": str((work / "agent" / "native.log").relative_to(ctx.trial_dir)),
        "not_copied": skipped[:50],
    }
    if rc == 124:
        raise Unchecked(f"judge ran out of its {settings.minutes:g} min budget")
    if rc != 0:
        raise Unchecked(f"judge exited with code {rc} (see {details['log']})")
    try:
        verdict = JudgeVerdict.model_validate_json((work / "workspace" / VERDICT_FILE).read_bytes())
    except FileNotFoundError:
        raise Unchecked(f"judge finished without writing {VERDICT_FILE}") from None
    except (ValidationError, ValueError) as exc:
        raise Unchecked(f"judge wrote an invalid {VERDICT_FILE} ({str(exc).splitlines()[0][:200]})") from None
    answers = {"contamination": verdict.contamination, "disallowed_model_use": verdict.disallowed_model_use}
    flagged = {k: a for k, a in answers.items() if a.verdict == "flagged"}
    details["answers"] = {k: a.model_dump() for k, a in answers.items()}
    if flagged:
        return Finding(
            verdict="flagged",
            reason="judge flagged " + ", ".join(flagged),
            evidence=[{"question": k, "justification": a.justification} for k, a in flagged.items()],
            details=details,
        )
    return Finding(
        verdict="clean", reason="judge found neither contamination nor disallowed model use", details=details
    )


def _fresh_dir(path: Path) -> Path:
    if path.exists() or path.is_symlink():
        old = path.with_name(f"{path.name}.{int(time.time())}")
        path.rename(old)  # a previous judge run stays for the reviewer
    path.mkdir()
    return path


def _copy_evidence(ctx: CheckContext, dest: Path) -> list[str]:
    skipped: list[str] = []

    def ignore(folder: str, names: list[str]) -> list[str]:
        out = []
        for n in names:
            p = Path(folder) / n
            if n in (".git", "node_modules", "__pycache__") or p.is_symlink():
                out.append(n)
            elif p.is_file() and (n.endswith(_WEIGHTS) or p.stat().st_size > _COPY_LIMIT):
                out.append(n)
                skipped.append(str(p.relative_to(ctx.trial_dir)))
        return out

    if ctx.workspace.is_dir():
        shutil.copytree(ctx.workspace, dest / "workspace", ignore=ignore)
    else:
        (dest / "workspace").mkdir(parents=True)
    if (ctx.agent_dir / "trajectory.json").is_file():
        shutil.copy2(ctx.agent_dir / "trajectory.json", dest / "trajectory.json")
    if ctx.transcript.is_file():  # the gateway's record (already redacted); a huge one is cut, and says so
        _copy_head(ctx.transcript, dest / "transcript.jsonl", _COPY_LIMIT)
        if ctx.transcript.stat().st_size > _COPY_LIMIT:
            skipped.append(f"{ctx.transcript.relative_to(ctx.trial_dir)} (after its first {_COPY_LIMIT} bytes)")
    checks = {
        p.stem: json.loads(p.read_text())
        for p in sorted((ctx.trial_dir / "checks").glob("*.json"))
        if p.stem not in ("verdicts", "summary", "judge")
    }
    (dest / "deterministic_checks.json").write_text(json.dumps(checks, indent=1))
    for p in [dest, *dest.rglob("*")]:  # read-only: the judge reviews, it does not edit
        mode = p.lstat().st_mode
        if not stat.S_ISLNK(mode):
            os.chmod(p, mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    return skipped


def _copy_head(src: Path, dest: Path, limit: int) -> None:
    """The first `limit` bytes of a JSONL file, cut at a line end."""
    with open(src, "rb") as fh:
        data = fh.read(limit)
    if len(data) == limit and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
    dest.write_bytes(data)


def _prompt(ctx: CheckContext, *, has_trajectory: bool, has_transcript: bool) -> str:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ptbench.integrity", "templates"), undefined=jinja2.StrictUndefined
    )
    return env.get_template("judge_prompt.md.j2").render(
        base_model=ctx.spec.base_model.id,
        task=ctx.spec.task.name,
        verdict_file=VERDICT_FILE,
        has_trajectory=has_trajectory,
        has_transcript=has_transcript,
    )


@contextmanager
def _launch(run: AgentRun, prompt: str) -> Iterator[tuple[SandboxCommand, dict[str, str]]]:
    """The judge's command in the trial's sandbox, with the gateway (if its CLI uses one) held open
    while it runs; and every secret to redact from its log."""
    trial = run.trial
    if problem := run.credential_problem():  # a CLI that would hold a real key no gateway stands in for
        raise Unchecked(f"judge could not start: {problem}")
    sandbox = resolve_sandbox(trial.spec.sandbox)
    scratch = sandbox_dirs(trial)[0].parent  # its private /tmp and /dev/shm, as an agent's
    with trial_gateway(run, for_judge=True) as gateway:
        network = resolve_network(
            sandbox,
            trial.spec.sandbox_options,
            gateway=gateway is not None and gateway.socket_path is not None,
            agent=f"judge agent '{run.spec.name}'",
        )
        setup = SolveLaunch(sandbox, network, gateway.base_url if gateway else "", scratch, gateway=gateway)
        launch = build_launch(
            run,
            prompt=prompt,
            base_url=setup.base_url,
            gateway_token=gateway.token if gateway else "",
            # the trial's own marker (the judge works in <trial>/judge): a runner killed -9 sweeps its leftovers too
            extra_env={**(gateway.agent_env() if gateway else {}), TRIAL_ENV_MARKER: str(trial.path.parent)},
        )
        if not launch.argv or not launch.argv[0]:
            raise Unchecked(f"judge agent '{run.spec.name}' has no executable here (install its CLI)")
        yield setup.command(run, launch), {**launch.secrets, **(gateway.real_keys if gateway else {})}


def _run(command: SandboxCommand, secrets: dict[str, str], log_path: Path, limit: float) -> int:
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            command.argv,
            cwd=command.cwd,
            env=command.env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            rc = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            rc = 124
        finally:
            stop_group(proc)  # the CLI's own children too
    text = log_path.read_text(errors="replace")
    for secret in sorted((s for s in secrets.values() if len(s) >= 4), key=len, reverse=True):
        text = text.replace(secret, "[REDACTED]")
    log_path.write_text(text)
    return rc


@register_check("judge")
class JudgeCheck(IntegrityCheck):
    harbor_unchecked = "runs an agent CLI, which the verifier image does not have: it will be unchecked"
    selftest_unmeasured = (
        "the LLM judge needs a model provider; the only offline judge is a scripted one that writes the verdict it "
        "is given, whose recall would be its script's"
    )
    """the optional LLM judge (settings: integrity.judge)."""

    def check(self, ctx: CheckContext) -> Finding:
        return check(ctx)
