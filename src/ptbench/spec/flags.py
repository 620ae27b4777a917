"""A campaign from a one-line `ptbench run --agent A --model M --task T --hours H` (no campaign file).

The flags become the same dict a campaign file holds, parsed by the same `Campaign` model and then
checked by the same `ptbench.validate.validate_campaign`; a problem names the flag instead of a line
(`core.yamlio.CommandLineSource`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ptbench.core.errors import UserError
from ptbench.core.files import slug
from ptbench.core.validation import describe_validation_error
from ptbench.core.yamlio import CommandLineSource
from ptbench.spec.campaign import Campaign

SOURCE = "ptbench run"  # how a problem of a one-line run starts: `ptbench run --task-options: ...`


def base_model_entry(model: str) -> dict[str, Any]:
    """A local folder (anything that exists, or is written as a path) -> {id, path, label}; else a hub id.
    The id keeps the folder's name, so the harness's chat template is found from it (e.g. Qwen3-1.7B)."""
    looks_local = model.startswith(("/", ".", "~")) or Path(model).expanduser().exists()
    if not looks_local:
        return {"id": model}
    name = Path(model).expanduser().name or "model"
    return {"id": f"local/{name}", "path": model, "label": name}


def derived_name(agents: list[str], model: str, task: str) -> str:
    base = base_model_entry(model)
    return "-".join(slug(x) for x in (task, *agents, base.get("label") or base["id"].rsplit("/", 1)[-1]))


def campaign_from_flags(
    *,
    agents: list[str],
    model: str,
    task: str,
    hours: float,
    task_options: str | None = None,
    gpus: int | None = None,
    seeds: list[int] | None = None,
    backend: str = "local",
    sandbox: str | None = None,
    name: str | None = None,
    results_dir: str = "results",
) -> tuple[Campaign, CommandLineSource]:
    src = CommandLineSource(path=Path(SOURCE), data=None)
    options: Any = {}
    if task_options:
        try:
            options = json.loads(task_options)
        except json.JSONDecodeError as exc:
            raise UserError(
                f"{SOURCE} --task-options: not JSON ({exc.msg} at column {exc.colno}); e.g. '{{\"digits\": 2}}'"
            ) from None
        if not isinstance(options, dict):
            raise UserError(f"{SOURCE} --task-options: give a JSON object, e.g. '{{\"digits\": 2}}'")
    data: dict[str, Any] = {
        "name": name or derived_name(agents, model, task),
        "agents": list(agents),
        "base_models": [base_model_entry(model)],
        "tasks": [{"name": task, "options": options}],
        "budget": {"hours": hours, **({"gpus": gpus} if gpus is not None else {})},
        "backend": backend,
        "results_dir": results_dir,
        **({"seeds": seeds} if seeds else {}),
        **({"sandbox": sandbox} if sandbox else {}),
    }
    src.data = data
    try:
        return Campaign.model_validate(data), src
    except ValidationError as exc:
        raise UserError(describe_validation_error(exc, Campaign, src)) from None
