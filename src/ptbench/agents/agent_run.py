"""One solve's agent, resolved once: `AgentRun.resolve(trial)` reads agent.yaml and the trial's spec,
merges the options, renders the templated fields the harness itself needs (the upstream, the key
names, the gateway's allow-list) and loads the CLI's resume record. The solve stage builds it once
and hands the same object to the trial's gateway and to every launch of the CLI; nothing downstream
merges options or renders agent.yaml fields again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ptbench.agents.checks import agent_credentials, real_key_problem
from ptbench.agents.launcher import find_executable, render_field, required_keys
from ptbench.agents.options import merged_options
from ptbench.agents.rehearsal import rehearsal_options
from ptbench.agents.session import AgentSession, load_session, save_session
from ptbench.agents.spec import AgentSpec, load_agent
from ptbench.trial import TrialDir


@dataclass
class AgentRun:
    trial: TrialDir
    spec: AgentSpec
    model: str  # what the CLI is told: the campaign's model, else the rehearsal model in a rehearsal, else ""
    options: dict[str, Any]  # agent.yaml's defaults with the campaign's options over them
    rehearsal: dict[str, Any] | None  # the rehearsal settings, None in a real run
    rehearsal_url: str  # the scripted provider's base URL in a rehearsal, else ""
    executable: str | None  # the CLI's path here (None for built-in agents)
    keys: list[str]  # key variables the real upstream needs (the gateway reads them, or the CLI gets them)
    upstream: str  # the real provider behind the trial's gateway ("" when the agent is not behind one)
    allowed_models: dict[str, str]  # the gateway's allow-list: name the CLI sends -> name sent upstream
    credentials: str  # gateway | login | real_key | refused | none (agents.checks.agent_credentials)
    session: AgentSession = field(default_factory=AgentSession)  # the CLI's resume record (agent/session.json)

    @classmethod
    def resolve(cls, trial: TrialDir, *, rehearsal_url: str = "") -> AgentRun:
        ref = trial.spec.agent
        spec = load_agent(ref.name)
        options = merged_options(spec, ref.options)
        rehearsal = rehearsal_options(trial)
        model = ref.model or (spec.rehearsal_model if rehearsal is not None or rehearsal_url else "")
        real_base = rehearsal_url or str(options.get("base_url") or "")
        upstream = ""
        allowed: dict[str, str] = {}
        if spec.behind_gateway:
            ctx = {"model": model, "options": options}
            upstream = (
                rehearsal_url or render_field(spec.upstream, ctx, f"agents/{spec.name}/agent.yaml: upstream").strip()
            )
            allowed = _allowed_models(spec, model, options)
        return cls(
            trial=trial,
            spec=spec,
            model=model,
            options=options,
            rehearsal=rehearsal,
            rehearsal_url=rehearsal_url,
            executable=find_executable(spec),
            keys=required_keys(spec, model, options, real_base),
            upstream=upstream,
            allowed_models=allowed,
            # What the agent would hold is judged on the campaign's own model (as `validate` judged it).
            credentials=agent_credentials(spec, ref.model, options),
            session=load_session(trial.agent_dir),
        )

    @property
    def rehearsing(self) -> bool:
        return self.rehearsal is not None or bool(self.rehearsal_url)

    def credential_problem(self) -> str | None:
        """Why this agent must not start (it would hold a real key no gateway stands in for), or None."""
        if self.credentials != "refused":
            return None
        return real_key_problem(self.spec, self.trial.spec.agent.model, self.options)

    def cli_keys(self, endpoint: str) -> list[str]:
        """Key variables the CLI gets when it is pointed at `endpoint` (a gateway, a scripted provider; ""
        for the agent's own default): templated key names may depend on the endpoint."""
        return required_keys(self.spec, self.model, self.options, endpoint or str(self.options.get("base_url") or ""))

    def save_session(self) -> None:
        save_session(self.trial.agent_dir, self.session)

    def reload_session(self) -> AgentSession:
        self.session = load_session(self.trial.agent_dir)
        return self.session


def _allowed_models(spec: AgentSpec, model: str, options: dict[str, Any]) -> dict[str, str]:
    ctx = {"model": model, "options": options}
    where = f"agents/{spec.name}/agent.yaml: gateway_models"
    models = {render_field(k, ctx, where): render_field(v, ctx, where) for k, v in spec.gateway_models.items()} or {
        model: model
    }
    for extra in [options.get("small_model"), *(options.get("allowed_models") or [])]:
        if extra:
            models.setdefault(str(extra), str(extra))
    return {k: v for k, v in models.items() if k}
