"""The solve stage's LLM gateway: the real key stays in the runner, the agent gets a trial token.

For an LLM agent (one with an `upstream` and `gateway: true`) the runner reads the real key, drops
it from its own environment, makes itself non-dumpable (a same-uid process can then read neither
its /proc/PID/environ nor its memory) and serves the gateway from a thread of its own process,
outside the sandbox. Agent options: `cost_cap_usd` (the agent's calls), `judge_cost_cap_usd` (the
judge route its evaluate.sh uses), `allowed_models` (beside the campaign's model and `small_model`).
Every call's new messages and the model's reply go to record/transcript.jsonl (redacted of the keys
and the token), which the contamination check scans and the integrity judge reads.
Subscription logins (`gateway: false`) keep their token files, as before: the documented exception.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ptbench.agents.agent_run import AgentRun
from ptbench.agents.launcher import REHEARSAL_KEY, read_secrets
from ptbench.agents.redact import Redactor
from ptbench.agents.spec import AgentSpec
from ptbench.core.errors import UserError
from ptbench.core.procsec import make_not_dumpable
from ptbench.core.secrets import remove_from_environ
from ptbench.gateway import Gateway, Upstream, gateway_in_thread, new_trial_token
from ptbench.gateway.server import JUDGE_ROUTE
from ptbench.gateway.transcript import Transcript
from ptbench.inference.judge import JUDGE_GATEWAY_ENV, JUDGE_TOKEN_ENV, JudgeConfig
from ptbench.trial import TrialDir


@dataclass
class TrialGateway:
    gateway: Gateway
    token: str
    real_keys: dict[str, str]  # to redact: never written anywhere
    socket_path: Path | None = None  # the gateway also listens here: bound into a sandbox without a network

    @property
    def base_url(self) -> str:
        return self.gateway.base_url

    @property
    def port(self) -> int:
        return int(self.base_url.rsplit(":", 1)[1])

    def agent_env(self) -> dict[str, str]:
        """What the agent's environment gets beside its key variables (the judge route, if any)."""
        if not self.gateway.serves(JUDGE_ROUTE):
            return {}
        return {JUDGE_GATEWAY_ENV: f"{self.base_url}/judge", JUDGE_TOKEN_ENV: self.token}

    def totals(self) -> dict[str, Any]:
        """Per route: calls, tokens, cost, its cap and whether the cap was hit (the gateway's own counts)."""
        return self.gateway.totals()

    def cost_cap_message(self) -> str | None:
        """Why the agent's calls were refused, if its route's cost cap is spent; None while it is not."""
        agent = self.totals()["agent"]
        if not agent["cap_hit"]:
            return None
        return (
            f"the trial's cost cap of ${agent['cost_cap_usd']:g} is spent (${agent['cost_usd']:.4f}); "
            "further model calls were refused"
        )


def uses_gateway(spec: AgentSpec) -> bool:
    return spec.behind_gateway


def _float(options: dict[str, Any], name: str) -> float | None:
    value = options.get(name)
    if value in (None, ""):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise UserError(f"agent option {name}: '{value}' is not a number of US dollars (e.g. {name}: 20)") from None


def _judge_upstream(trial: TrialDir, options: dict[str, Any], keep: set[str]) -> Upstream | None:
    """The judge of a judged task (Arena, HealthBench), for the agent's own evaluate.sh."""
    from ptbench.tasks import get_task
    from ptbench.tasks._judged import JudgedTask

    task = get_task(trial.spec.task.name, **trial.spec.task.options)
    if not isinstance(task, JudgedTask):
        return None
    config: JudgeConfig = task.judge_config
    key = read_secrets([config.api_key_env]).get(config.api_key_env, "")
    keep.add(config.api_key_env)  # the harness's own evaluation needs it later
    return Upstream(
        JUDGE_ROUTE,
        config.base_url,
        key,
        models={c.model: c.model for c in task.judge_configs},  # several judges share one endpoint and key
        cost_cap_usd=_float(options, "judge_cost_cap_usd"),
    )


@contextmanager
def trial_gateway(run: AgentRun, *, for_judge: bool = False) -> Iterator[TrialGateway | None]:
    """The trial's gateway for the whole solve stage (None for agents that call no LLM through one).

    `for_judge`: the integrity judge's own gateway, which serves no task-judge route (that route is
    for the agent's evaluate.sh) and leaves the key in the harness's environment (a second judge of
    `integrity.judges` reads it again; the CLI's environment is built without it either way)."""
    trial, spec = run.trial, run.spec
    if not uses_gateway(spec):
        with nullcontext(None) as none:
            yield none
        return
    options, model, upstream, names = run.options, run.model, run.upstream, run.keys
    if not upstream:
        raise UserError(
            f"agent '{spec.name}': no provider URL for model '{model}' behind the gateway; set agent option base_url"
        )
    if run.rehearsal_url:
        keys = {n: REHEARSAL_KEY for n in names}
    else:
        keys = read_secrets(names)
        missing = [n for n in names if n not in keys]
        if missing or not names:
            raise UserError(
                f"agent '{spec.name}' needs {', '.join(missing or ['a key'])}: set it in the environment or in .env"
            )
    make_not_dumpable()
    keep: set[str] = set()
    judge = None if for_judge else _judge_upstream(trial, options, keep)
    if not for_judge:  # the runner's children no longer inherit it; what the runner writes is still redacted of it
        remove_from_environ([n for n in names if n not in keep])
    models = dict(run.allowed_models)
    if not models:  # an empty allow-list would let any model through: fail closed
        raise UserError(
            f"agent '{spec.name}' reaches its model through the trial's gateway, whose allow-list is the campaign's "
            "model: set `model:` for this agent (or agent option allowed_models)"
        )
    token = new_trial_token()
    agent = Upstream("agent", upstream, keys[names[0]], models=models, cost_cap_usd=_float(options, "cost_cap_usd"))

    def on_cap(up: Upstream) -> None:
        trial.event("cost_cap", route=up.name, cap_usd=up.cost_cap_usd, spent_usd=round(up.spent_usd, 6))

    secrets = {**keys, **({JUDGE_ROUTE: judge.key} if judge and judge.key else {})}
    redactor = Redactor({**secrets, "trial_token": token})
    # The record of every call, outside anything the sandbox binds (the agent can neither read nor edit it).
    record = trial.path / "record"
    record.mkdir(mode=0o700, exist_ok=True)
    transcript = Transcript(record / "transcript.jsonl", redact=redactor.bytes)
    gw = Gateway(
        token,
        agent,
        judge=judge,
        calls_path=trial.agent_dir / "calls.jsonl",
        redact=redactor.text,
        on_cap=on_cap,
        transcript=transcript,
    )
    # A short path (a Unix socket's is limited to 107 bytes), private to the runner's user.
    sock_dir = Path(tempfile.mkdtemp(prefix="ptbench-gw-", dir="/tmp" if Path("/tmp").is_dir() else None))
    sock = sock_dir / "gateway.sock"
    try:
        with gateway_in_thread(gw, unix_path=str(sock)):
            trial.event(
                "gateway",
                base_url=gw.base_url,
                upstream=upstream,
                models=sorted(agent.models),
                cost_cap_usd=agent.cost_cap_usd,
                judge=bool(judge),
            )
            try:
                yield TrialGateway(gw, token, secrets, socket_path=sock)
            finally:
                trial.event("gateway_closed", **{f"{k}_{f}": v for k, t in gw.totals().items() for f, v in t.items()})
    finally:
        shutil.rmtree(sock_dir, ignore_errors=True)
