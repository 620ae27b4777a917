"""Load and fully validate a campaign file before anything is created or submitted."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from ptbench.core.errors import UserError
from ptbench.spec.campaign import Campaign
from ptbench.core.validation import describe_validation_error
from ptbench.core.yamlio import LocatedYaml, load_located_yaml

M = TypeVar("M", bound=BaseModel)


def load_model_file(path: str | Path, model: type[M]) -> tuple[M, LocatedYaml]:
    """Parse a YAML file into `model`; every problem is one `UserError` line with file and line."""
    src = load_located_yaml(path)
    if not isinstance(src.data, dict):
        raise UserError(f"{src.path}:1: expected a mapping of keys at the top level (see the README's campaign reference)")
    try:
        return model.model_validate(src.data), src
    except ValidationError as exc:
        raise UserError(describe_validation_error(exc, model, src)) from None


def load_campaign(path: str | Path, *, check_names: bool = True) -> Campaign:
    """Load a campaign and check names against the agent and task registries."""
    campaign, src = load_model_file(path, Campaign)
    if check_names:
        _check_names(campaign, src)
    return campaign


def _check_names(campaign: Campaign, src: LocatedYaml) -> None:
    import difflib

    from ptbench.agents import available_agents
    from ptbench.tasks import available_tasks

    for key, items, known in (
        ("agents", [a.name for a in campaign.agents], available_agents()),
        ("tasks", [t.name for t in campaign.tasks], available_tasks()),
    ):
        for i, name in enumerate(items):
            if name not in known:
                near = difflib.get_close_matches(name, known, n=1)
                hint = f"did you mean '{near[0]}'?" if near else f"known: {', '.join(sorted(known))}"
                line = src.line_of((key, i))
                raise UserError(f"{src.path}:{line}: {key}[{i}]: unknown {key[:-1]} '{name}' ({hint})")
