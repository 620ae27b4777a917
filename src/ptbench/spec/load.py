"""Load and fully validate a campaign file before anything is created or submitted."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from ptbench.core.errors import UserError
from ptbench.core.validation import describe_validation_error
from ptbench.core.yamlio import LocatedYaml, load_located_yaml
from ptbench.spec.campaign import Campaign

M = TypeVar("M", bound=BaseModel)


def load_model_file(path: str | Path, model: type[M]) -> tuple[M, LocatedYaml]:
    """Parse a YAML file into `model`; every problem is one `UserError` line with file and line."""
    src = load_located_yaml(path)
    if not isinstance(src.data, dict):
        raise UserError(f"{src.path}:1: expected a mapping of keys at the top level (see docs/campaigns.md)")
    try:
        return model.model_validate(src.data), src
    except ValidationError as exc:
        raise UserError(describe_validation_error(exc, model, src)) from None


def load_campaign(path: str | Path) -> Campaign:
    """Parse and schema-check a campaign file (names and options are checked by `ptbench.validate`)."""
    return load_campaign_located(path)[0]


def load_campaign_located(path: str | Path) -> tuple[Campaign, LocatedYaml]:
    return load_model_file(path, Campaign)
