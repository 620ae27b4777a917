"""Before anything is planned or submitted: can every agent of a campaign start, and does a real
key reach one only where its agent.yaml says so?"""

from __future__ import annotations

from typing import Any

from ptbench.agents.launcher import find_executable, missing_requirements, required_keys
from ptbench.agents.options import merged_options
from ptbench.agents.spec import AgentSpec, agent_folder, load_agent
from ptbench.core.errors import UserError
from ptbench.sandbox.request import sandbox_facts
from ptbench.spec.campaign import Campaign


def agent_problems(campaign: Campaign, *, rehearse: bool = False, runs_here: bool = True) -> list[str]:
    """Unset keys and absent login files (none in a rehearsal); CLIs missing here when the trials run here
    (`runs_here`: the campaign's backend says), unless a container brings them."""
    problems: list[str] = []
    for ref in campaign.agents:
        spec = load_agent(ref.name)  # a malformed agent.yaml fails here with file, field and fix
        problems += missing_requirements(spec, ref.model, merged_options(spec, ref.options), rehearse=rehearse)
        if not sandbox_facts(campaign.sandbox).own_image and runs_here:
            try:
                find_executable(spec)
            except UserError as exc:
                problems.append(str(exc))
    return list(dict.fromkeys(problems))


def check_agents(campaign: Campaign, *, rehearse: bool = False, runs_here: bool = True) -> None:
    problems = agent_problems(campaign, rehearse=rehearse, runs_here=runs_here)
    if problems:  # every one, a line each
        raise UserError("\n".join(f"campaign '{campaign.name}': {p}" for p in problems))


def agent_credentials(spec: AgentSpec, model: str | None, options: dict[str, Any]) -> str:
    """What the agent holds: "gateway" (a trial token; the gateway has the key), "login" (a
    subscription login, `gateway: false`: the documented exception), "real_key" (`allow_real_key`),
    "none" (it calls no provider)."""
    if spec.behind_gateway:
        return "gateway"
    if not required_keys(spec, model, options, str(options.get("base_url") or "")) and not spec.auth_files:
        return "none"
    if not spec.gateway:
        return "login"
    return "real_key" if spec.allow_real_key else "refused"


def real_key_problem(spec: AgentSpec, model: str | None, options: dict[str, Any]) -> str | None:
    """Fail closed: an agent whose keys no gateway can hold (no `upstream:`) would get them itself."""
    if agent_credentials(spec, model, options) != "refused":
        return None
    names = required_keys(spec, model, options, str(options.get("base_url") or "")) or sorted(spec.auth_files)
    return (
        f"{agent_folder(spec.name) / 'agent.yaml'}: agent '{spec.name}' would get the real credential {names[0]} in "
        "its own environment (without `upstream:` the trial's gateway cannot hold it): add `upstream: <the provider's "
        "base URL>` to agent.yaml, or `allow_real_key: true` to accept that (recorded in result.json, rows marked "
        "[real key])"
    )


def check_credentials(campaign: Campaign) -> None:
    for ref in campaign.agents:
        spec = load_agent(ref.name)
        if problem := real_key_problem(spec, ref.model, merged_options(spec, ref.options)):
            raise UserError(problem)
