"""Everything about a campaign that can be checked before anything is created or submitted.

`validate_campaign` is what `ptbench validate`, `plan`, `run` and `submit` call first: the file's
schema, agent and task names, every task's and agent's options against what they declare, the
backend's options, unique trial ids, that no agent gets a real key it has not declared it may hold
(agents/checks.py), and whether every agent can start (keys, logins, CLIs). The
first problem is one line naming the file, line, field and fix.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from ptbench.agents import available_agents
from ptbench.agents.checks import check_agents, check_credentials
from ptbench.agents.options import check_agent_options
from ptbench.agents.spec import load_agent
from ptbench.backends import get_backend
from ptbench.core.errors import OptionProblem, UserError
from ptbench.core.yamlio import LocatedYaml
from ptbench.plan import check_unique_ids, expand
from ptbench.runner.trial_gateway import uses_gateway
from ptbench.sandbox.network import resolve_network
from ptbench.spec import Campaign, load_campaign_located
from ptbench.tasks import available_tasks
from ptbench.tasks.options import check_task_options
from ptbench.trial import TrialSpec


def validate_campaign(
    path: str | Path, *, rehearse: bool = False, agents_can_start: bool = True
) -> tuple[Campaign, list[TrialSpec]]:
    campaign, src = load_campaign_located(path)
    check_names(campaign, src)
    check_options(campaign, src)
    check_network(campaign, src)
    get_backend(campaign.backend.name, campaign.backend.options)  # its options, parsed as submit will
    specs = expand(campaign)
    check_unique_ids(campaign, specs)
    check_credentials(campaign)  # a configuration error, keys set or not
    if agents_can_start:
        check_agents(campaign, rehearse=rehearse)
    return campaign, specs


def check_names(campaign: Campaign, src: LocatedYaml) -> None:
    for key, items, known in (
        ("agents", [a.name for a in campaign.agents], available_agents()),
        ("tasks", [t.name for t in campaign.tasks], available_tasks()),
    ):
        for i, name in enumerate(items):
            if name not in known:
                near = difflib.get_close_matches(name, known, n=1)
                hint = f"did you mean '{near[0]}'?" if near else f"known: {', '.join(sorted(known))}"
                raise UserError(f"{src.path}:{src.line_of((key, i))}: {key}[{i}]: unknown {key[:-1]} '{name}' ({hint})")


def check_options(campaign: Campaign, src: LocatedYaml) -> None:
    """Task and agent options, each against what that task's constructor / agent's agent.yaml declares."""
    for i, task in enumerate(campaign.tasks):
        try:
            check_task_options(task.name, task.options)
        except OptionProblem as exc:
            raise _at(src, ("tasks", i), exc) from None
    for i, agent in enumerate(campaign.agents):
        try:
            check_agent_options(load_agent(agent.name), agent.options)
        except OptionProblem as exc:
            raise _at(src, ("agents", i), exc) from None


def check_network(campaign: Campaign, src: LocatedYaml) -> None:
    """`sandbox_options.network` can be given to every agent of the campaign (gateway: bwrap, gateway agents)."""
    for agent in campaign.agents:
        try:
            resolve_network(
                campaign.sandbox,
                campaign.sandbox_options,
                gateway=uses_gateway(load_agent(agent.name)),
                agent=f"agent '{agent.name}'",
            )
        except UserError as exc:
            raise UserError(f"{src.path}:{src.line_of(('sandbox_options', 'network'))}: {exc}") from None


def _at(src: LocatedYaml, item: tuple[str, int], exc: OptionProblem) -> UserError:
    loc = (*item, "options", exc.key) if exc.key else (*item, "options")
    line = src.line_of(loc)
    field = f"{item[0]}[{item[1]}].options" + (f".{exc.key}" if exc.key else "")
    return UserError(f"{src.path}:{line}: {field}: {exc} (see `ptbench list` and docs/campaigns.md)")
