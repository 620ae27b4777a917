"""The base model's zero-shot score for a Harbor task, found where the collator finds it.

`ptbench collate` pays a trial without a valid, clean score the base model's zero-shot score from
`ptbench baseline --kind base` records (results/baselines beside the campaign) or from the
campaign's own `base-model` agent trials. The export looks there too and writes what it finds into
the task's tests/verify.json; without one the verifier evaluates the base model itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ptbench.core.errors import UserError
from ptbench.results.collate import load
from ptbench.results.policy import BaselineIndex
from ptbench.results.schema import BaseModelInfo, TaskInfo


def baseline_index(campaign: Any) -> tuple[BaselineIndex | None, list[str]]:
    """The collator's index over the campaign's results and the baselines beside them (None when neither exists)."""
    campaign_dir = Path(campaign.campaign_dir)
    roots = [p for p in (campaign_dir, campaign_dir.parent / "baselines") if p.is_dir()]
    if not roots:
        return None, []
    try:
        loaded = load(roots)
    except UserError:
        return None, []
    return BaselineIndex(loaded.records), [str(r) for r in roots]


def base_score(index: BaselineIndex | None, roots: list[str], spec: Any) -> dict[str, Any] | None:
    """{"value", "source"} of the base model's zero-shot score on the spec's task, or None."""
    if index is None:
        return None
    value = index.lookup_for(
        BaseModelInfo(id=spec.base_model.id, label=spec.base_model.display),
        TaskInfo(name=spec.task.name, label=spec.task.display),
    )
    if value is None:
        return None
    return {"value": value, "source": f"{' or '.join(sorted(index.sources_used))} records in {', '.join(roots)}"}
