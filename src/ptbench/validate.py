"""Everything about a campaign that can be checked before anything is created or submitted.

`validate_campaign` is what `ptbench validate`, `plan`, `run` and `submit` call first: the file's
schema, agent and task names, every task's and agent's options against what they declare, the
backend's options, unique trial ids, that every local base-model path exists (unless the campaign
says it exists only on the compute nodes), that every agent behind the trial's gateway names its
model, that no agent gets a real key it has not declared it may hold (agents/checks.py), and whether
every agent can start (keys, logins, CLIs). Each problem is one line naming the file, line, field
and fix; all the problems these checks find are reported at once.
"""

from __future__ import annotations

from collections.abc import Callable
from difflib import get_close_matches
from pathlib import Path
from typing import Any

from pydantic import ValidationError, create_model

from ptbench.agents import available_agents
from ptbench.agents.checks import check_agents, check_credentials
from ptbench.agents.options import check_agent_options
from ptbench.agents.spec import load_agent
from ptbench.backends import get_backend
from ptbench.backends.registry import BACKENDS
from ptbench.core.errors import OptionProblem, UserError
from ptbench.core.validation import describe_validation_error, unknown_name
from ptbench.core.yamlio import LocatedYaml
from ptbench.inference.base import ENGINES
from ptbench.inference.engines import AUTO as AUTO_ENGINE
from ptbench.integrity.applicability import not_applicable_reason
from ptbench.integrity.checks import CHECKS
from ptbench.launch.trial_gateway import uses_gateway
from ptbench.plan import check_unique_ids, expand
from ptbench.sandbox import SANDBOXES
from ptbench.sandbox.auto import AUTO as AUTO_SANDBOX
from ptbench.sandbox.network import resolve_network
from ptbench.spec import Campaign, load_campaign_located
from ptbench.spec.campaign import Backend
from ptbench.tasks import available_tasks
from ptbench.tasks.options import check_task_options
from ptbench.trial import TrialSpec


def validate_campaign(
    path: str | Path | tuple[Campaign, LocatedYaml], *, rehearse: bool = False, agents_can_start: bool = True
) -> tuple[Campaign, list[TrialSpec]]:
    """`path`: a campaign file, or a campaign already parsed with its source (a one-line `ptbench run`'s
    flags, `ptbench.api`), which gets the same checks."""
    campaign, src = path if isinstance(path, tuple) else load_campaign_located(path)
    problems: list[str] = []

    def collect(check: Callable[[], object]) -> bool:
        try:
            check()
        except UserError as exc:
            problems.append(str(exc))
            return False
        return True

    # Every problem at once, one line each; the checks that look agents and tasks up need known names.
    names_ok = collect(lambda: check_names(campaign, src))
    if collect(lambda: check_integrity(campaign, src)) and names_ok:
        collect(lambda: check_options(campaign, src))
        collect(lambda: check_network(campaign, src))
        collect(lambda: check_gateway_models(campaign, src, rehearse=rehearse))
        collect(lambda: check_required_integrity(campaign, src))
        collect(lambda: check_chat_templates(campaign, src))
    collect(lambda: check_base_model_paths(campaign, src))
    collect(lambda: check_backend_options(campaign.backend, src))
    if problems:
        raise UserError("\n".join(problems))
    specs = expand(campaign)
    check_unique_ids(campaign, specs)
    check_credentials(campaign)  # a configuration error, keys set or not
    if agents_can_start:
        runs_here = BACKENDS.get(campaign.backend.name).runs_here  # a scheduler's nodes have their own CLIs
        check_agents(campaign, rehearse=rehearse, runs_here=runs_here)
    return campaign, specs


def check_names(campaign: Campaign, src: LocatedYaml) -> None:
    """Every name the campaign looks up, against its registry (a plugin's names too), with did-you-mean."""
    problems = []
    for key, items, known in (
        ("agents", [a.name for a in campaign.agents], available_agents()),
        ("tasks", [t.name for t in campaign.tasks], available_tasks()),
    ):
        for i, name in enumerate(items):
            if (problem := unknown_name(key[:-1], name, sorted(known))) is not None:
                problems.append(f"{src.where((key, i))}: {key}[{i}]: {problem}")
    for loc, kind, name, known in (
        (("sandbox",), "sandbox", campaign.sandbox, [AUTO_SANDBOX, *SANDBOXES.names()]),
        (("evaluation", "engine"), "engine", campaign.evaluation.engine, [AUTO_ENGINE, *ENGINES.names()]),
    ):
        if (problem := unknown_name(kind, name, known)) is not None:
            problems.append(f"{src.where(loc)}: {'.'.join(loc)}: {problem}")
    if problems:
        raise UserError("\n".join(problems))


def check_integrity(campaign: Campaign, src: LocatedYaml) -> None:
    """`integrity.checks` and `integrity.require` name registered checks (integrity/checks.py, plugins
    included); every other key under `integrity:` is a check's settings, valid for its model."""
    known = CHECKS.names()
    integrity = campaign.integrity
    problems = []
    for key in ("checks", "require"):
        for i, name in enumerate(getattr(integrity, key)):
            problem = unknown_name("integrity check", name, known)
            if problem is not None:
                problems.append(f"{src.where(('integrity', key, i))}: integrity.{key}[{i}]: {problem}")
    fields = list(type(integrity).model_fields)
    for key, raw in (integrity.model_extra or {}).items():
        if key not in known:
            near = get_close_matches(key, [*fields, *known], n=1, cutoff=0.5)
            hint = f"did you mean '{near[0]}'?" if near else f"valid keys: {', '.join(fields)}, or a check's name"
            problems.append(f"{src.where(('integrity', key))}: unknown key 'integrity.{key}' ({hint})")
            continue
        # The check's settings model, seen from the file's top level: each error names its own line.
        settings = CHECKS.get(key).Settings
        one: dict[str, Any] = {key: (settings, ...)}
        at = create_model("Campaign", integrity=(create_model("Integrity", **one), ...))
        try:
            at.model_validate({"integrity": {key: {} if raw is None else raw}})
        except ValidationError as exc:
            problems.append(describe_validation_error(exc, at, src))
    if problems:
        raise UserError("\n".join(problems))


def check_options(campaign: Campaign, src: LocatedYaml) -> None:
    """Task and agent options, each against what that task's constructor / agent's agent.yaml declares."""
    problems = []
    for i, task in enumerate(campaign.tasks):
        try:
            check_task_options(task.name, task.options)
        except OptionProblem as exc:
            problems.append(str(_at(src, ("tasks", i), exc, "docs/tasks.md#task-options")))
    for i, agent in enumerate(campaign.agents):
        try:
            check_agent_options(load_agent(agent.name), agent.options)
        except OptionProblem as exc:
            problems.append(str(_at(src, ("agents", i), exc, f"agents/{agent.name}/agent.yaml")))
    if problems:
        raise UserError("\n".join(problems))


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
            raise UserError(f"{src.where(('sandbox_options', 'network'))}: {exc}") from None


def check_base_model_paths(campaign: Campaign, src: LocatedYaml) -> None:
    """A local copy that is not there fails every trial on the node: say so before anything is planned."""
    for i, base in enumerate(campaign.base_models):
        if not base.path or base.path_on_nodes:
            continue
        resolved = Path(base.path).expanduser().resolve()  # as `plan` resolves it
        if not resolved.exists():
            raise UserError(
                f"{src.where(('base_models', i, 'path'))}: base_models[{i}].path: {resolved} does not "
                "exist on this machine; fix the path (relative paths are taken from the current directory), or add "
                "`path_on_nodes: true` to this base model if it exists only on the compute nodes"
            )


def check_gateway_models(campaign: Campaign, src: LocatedYaml, *, rehearse: bool = False) -> None:
    """The trial's gateway lets through only the campaign's model: without one the agent could call nothing."""
    if rehearse:  # a rehearsal drives the scripted provider's model
        return
    for i, ref in enumerate(campaign.agents):
        if ref.model or not uses_gateway(load_agent(ref.name)):
            continue
        raise UserError(
            f"{src.where(('agents', i))}: agents[{i}].model: agent '{ref.name}' reaches its model "
            "through the trial's gateway, which lets through only the campaign's model; add `model:` to this agent "
            "(e.g. {name: " + ref.name + ", model: <provider's model id>})"
        )


def check_required_integrity(campaign: Campaign, src: LocatedYaml) -> None:
    """A check the campaign requires must have a method for every task (integrity/applicability.py)."""
    for check in campaign.integrity.require:
        for i, task in enumerate(campaign.tasks):
            reason = not_applicable_reason(check, task.name, task.options)
            if reason is not None:
                raise UserError(
                    f"{src.where(('integrity', 'require'))}: integrity.require: check '{check}' does not apply to "
                    f"tasks[{i}] '{task.name}' ({reason}); drop '{check}' from integrity.require or this task from "
                    "the campaign"
                )


def check_backend_options(backend: Backend, src: LocatedYaml) -> None:
    """`backend.name` against the registered backends (a plugin's too), then `backend.options`, parsed
    as `submit` and `render` will parse them (each backend's `options_model`)."""
    problem = unknown_name("backend", backend.name, BACKENDS.names())
    if problem is not None:
        hint = "; docs/guides/add-a-scheduler.md adds one" if "known:" in problem else ""
        raise UserError(f"{src.where(('backend', 'name'))}: backend.name: {problem}{hint}")
    try:
        get_backend(backend.name, backend.options)
    except OptionProblem as exc:
        loc = ("backend", "options", exc.key) if exc.key else ("backend", "options")
        field = "backend.options" + (f".{exc.key}" if exc.key else "")
        raise UserError(f"{src.where(loc)}: {field}: {exc} (see docs/schedulers.md)") from None


def check_chat_templates(campaign: Campaign, src: LocatedYaml) -> None:
    """A task that asks with chat prompts is evaluated with the harness's template for the base model's
    family (inference/chat_format.py, the same lookup `ptbench eval` makes): a base model of no known
    family would run every agent to the end and then fail each trial at evaluation (`eval_failed`)."""
    from ptbench.inference.chat_format import FAMILIES, choose_chat_format
    from ptbench.tasks import get_task
    from ptbench.tasks.base import uses_chat_prompts

    chat_tasks = []
    for t in campaign.tasks:
        try:
            task = get_task(t.name, **t.options)
        except (UserError, TypeError, ValueError):
            continue  # its options are reported by check_options
        if uses_chat_prompts(task):
            chat_tasks.append(t)
    if not chat_tasks:
        return
    problems = []
    for i, base in enumerate(campaign.base_models):
        chat = choose_chat_format(base.id, campaign.evaluation.chat_template)
        if chat.source == "harness" and chat.family is None:
            families = ", ".join(n for n, _ in FAMILIES)
            problems.append(
                f"{src.where(('base_models', i, 'id'))}: base_models[{i}].id: no harness chat template for base model "
                f"'{base.id}' (task '{chat_tasks[0].name}' asks with chat prompts; the family is read from the id: "
                f"{families}); name the family in the id (e.g. local/qwen3-1.7b), or set evaluation.chat_template "
                "to a family or to `model` (the model's own template, recorded in the metrics)"
            )
    if problems:
        raise UserError("\n".join(problems))


def _at(src: LocatedYaml, item: tuple[str, int], exc: OptionProblem, doc: str) -> UserError:
    """`exc` at its option's line; `doc`: where that task's or agent's options are listed."""
    loc = (*item, "options", exc.key) if exc.key else (*item, "options")
    field = f"{item[0]}[{item[1]}].options" + (f".{exc.key}" if exc.key else "")
    return UserError(f"{src.where(loc)}: {field}: {exc} (see {doc})")
