"""ptbench from Python: load, validate, run and collate a campaign (docs/api.md).

Thin functions over what the command line calls (`ptbench.validate`, `ptbench.commands`,
`ptbench.results.collate`): the same checks, the same plan, the same runner, the same tables. A
problem the user can fix raises `ptbench.core.errors.UserError` with the message the CLI prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ptbench.core.errors import UserError
from ptbench.core.yamlio import LocatedYaml
from ptbench.spec import Campaign

__all__ = ["Campaign", "Tables", "UserError", "collate", "load", "run", "validate"]


def load(path: str | Path) -> Campaign:
    """Parse a campaign file (schema only: `validate` runs every other check)."""
    from ptbench.spec import load_campaign

    return load_campaign(path)


def _source(campaign: Campaign | str | Path) -> str | Path | tuple[Campaign, LocatedYaml]:
    """A file as it is (problems name its lines); a Campaign object with a source that names it."""
    if isinstance(campaign, Campaign):
        return campaign, LocatedYaml(path=Path(f"<campaign {campaign.name}>"), data=None)
    return campaign


def validate(campaign: Campaign | str | Path, *, rehearse: bool = False, agents_can_start: bool = True) -> list[str]:
    """Every problem `ptbench validate` would report, one line each ([] when the campaign is good).
    Give the file rather than `load(file)` for problems that name their line."""
    from ptbench.validate import validate_campaign

    try:
        validate_campaign(_source(campaign), rehearse=rehearse, agents_can_start=agents_can_start)
    except UserError as exc:
        return str(exc).splitlines()
    return []


def run(
    campaign: Campaign | str | Path,
    *,
    rehearse: bool = False,
    replace: bool = False,
    parallelism: int | None = None,
    retry: tuple[str, ...] = (),
) -> dict[str, str]:
    """Validate, plan and run the campaign's unfinished trials on this machine (as `ptbench run`);
    returns trial id -> state. `retry`: "failed" and/or "cancelled" (as `--retry-failed`,
    `--retry-cancelled`: the earlier attempt moves to `<campaign>/.attempts/`)."""
    from ptbench import commands
    from ptbench.backends.local import LocalBackend

    unknown = [r for r in retry if r not in commands.RETRY_STATUSES]
    if unknown:  # before anything is planned
        raise UserError(f"retry={unknown[0]!r}: use 'failed' and/or 'cancelled'")
    plan = commands.plan_checked(_source(campaign), replace=replace, rehearse=rehearse)
    if retry:
        commands.retry_finished(plan, {s for r in retry for s in commands.RETRY_STATUSES[r]})
    if plan.unfinished:
        LocalBackend().submit(plan, plan.unfinished, parallelism=parallelism)
    return {r.trial_id: r.state for r in commands.status_rows(plan.campaign_dir)}


@dataclass
class Tables:
    """A collation: `markdown` (what `ptbench collate` prints), `results` (results.json's content:
    per-agent scores and every trial), the files written and the warnings."""

    markdown: str
    results: dict[str, Any]
    files: list[Path]
    warnings: list[str]


def collate(results_dir: str | Path | list[str | Path], out: str | Path | None = None, **options: Any) -> Tables:
    """Collate one or more results folders (or campaign files), as `ptbench collate` (the tables are
    written to `out`, default <first campaign>/tables; `options` as `collate_dirs` takes them)."""
    import json

    from ptbench.results.collate import write_tables

    targets = [str(t) for t in (results_dir if isinstance(results_dir, list) else [results_dir])]
    md, files, warnings = write_tables(targets, str(out) if out else None, plots=options.pop("plots", False), **options)
    found = next(f for f in files if f.name == "results.json")
    return Tables(md, json.loads(found.read_text()), files, warnings)
