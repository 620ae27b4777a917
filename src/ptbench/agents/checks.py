"""Before anything is planned or submitted: can every agent of a campaign start?"""

from __future__ import annotations

from ptbench.agents.launcher import find_executable, missing_requirements
from ptbench.agents.spec import load_agent
from ptbench.core.errors import UserError
from ptbench.spec.campaign import Campaign


def agent_problems(campaign: Campaign, *, rehearse: bool = False) -> list[str]:
    """Unset keys and absent login files (none in a rehearsal); CLIs missing here, unless a container brings them."""
    problems: list[str] = []
    for ref in campaign.agents:
        spec = load_agent(ref.name)  # a malformed agent.yaml fails here with file, field and fix
        problems += missing_requirements(spec, ref.model, {**spec.options, **ref.options}, rehearse=rehearse)
        if campaign.sandbox != "apptainer" and campaign.backend.name == "local":
            try:
                find_executable(spec)
            except UserError as exc:
                problems.append(str(exc))
    return list(dict.fromkeys(problems))


def check_agents(campaign: Campaign, *, rehearse: bool = False) -> None:
    problems = agent_problems(campaign, rehearse=rehearse)
    if problems:
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        raise UserError(f"campaign '{campaign.name}': {problems[0]}{more}")
