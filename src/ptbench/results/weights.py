"""Benchmark weights for the aggregate: proportional to 1 / (instruct − base), normalised.

Sources, in the order `auto` tries them: the campaign's own baseline records (instruct and base
zero-shot on every benchmark), else equal weights (said so in a footnote). Or given: the named preset
`ptb` (the published weights of the reference benchmark) or a JSON file {task: weight}.
"""

from __future__ import annotations

import json
import math
import statistics
from collections import defaultdict
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ptbench.core.errors import UserError
from ptbench.results.policy import is_instruct, is_zero_shot_base, own_score
from ptbench.results.schema import ResultRecord

# The reference system's task names -> ours.
PRESET_ALIASES = {"gpqamain": "gpqa", "arenahardwriting": "arena_hard_writing", "healthbench": "healthbench_easy"}
PRESETS = {"ptb": "ptb_benchmark_weights.json"}


@dataclass
class Weights:
    by_task: dict[str, float]  # normalised over the table's benchmarks
    source: str  # a sentence for the footnote


def preset(name: str) -> dict[str, float]:
    raw = json.loads(resources.files("ptbench.results").joinpath("data", PRESETS[name]).read_text())
    return {PRESET_ALIASES.get(k, k): float(v) for k, v in raw.items()}


def model_means(records: list[ResultRecord], keep) -> dict[str, float]:
    """Per task: the mean over models of each model's mean score, for records that `keep` selects."""
    per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        if keep(r) and (score := own_score(r)) is not None:
            per[r.task.label][r.base_model.id].append(score)
    return {t: statistics.fmean(statistics.fmean(v) for v in models.values()) for t, models in per.items()}


def from_baselines(records: list[ResultRecord], tasks: list[str]) -> dict[str, float] | None:
    """1 / (instruct − base zero-shot) per task, normalised; None when a task lacks either baseline."""
    instruct, base = model_means(records, is_instruct), model_means(records, is_zero_shot_base)
    if not tasks or any(t not in instruct or t not in base for t in tasks):
        return None
    gaps = {t: instruct[t] - base[t] for t in tasks}
    bad = [f"{t} (instruct {instruct[t]:.4g} ≤ base {base[t]:.4g})" for t, g in gaps.items() if g <= 0]
    if bad:
        raise UserError(
            f"benchmark weights 1/(instruct − base) are undefined for {', '.join(bad)}; "
            "pass --weights ptb or --weights FILE.json"
        )
    return _normalise({t: 1.0 / g for t, g in gaps.items()})


def _normalise(w: dict[str, float]) -> dict[str, float]:
    total = sum(w.values())
    return {t: v / total for t, v in w.items()}


def resolve(spec: str, records: list[ResultRecord], tasks: list[str], names: dict[str, str] | None = None) -> Weights:
    """`spec`: auto | equal | a preset name | a JSON file path. `tasks` are the table's columns (task
    labels); `names` maps a label to its task name, for weights keyed by task name."""
    if spec == "auto":
        w = from_baselines(records, tasks)
        if w is not None:
            return Weights(w, "weights ∝ 1/(instruct − base zero-shot) from the baseline records, normalised")
        return Weights(
            _normalise({t: 1.0 for t in tasks}) if tasks else {},
            "equal weights (no instruct and base zero-shot baselines for every benchmark; pass --weights ptb or FILE)",
        )
    if spec == "equal":
        return Weights(_normalise({t: 1.0 for t in tasks}) if tasks else {}, "equal weights")
    if spec in PRESETS:
        given, source = preset(spec), f"the published weights of the reference benchmark (preset '{spec}')"
    else:
        path = Path(spec)
        if not path.is_file():
            raise UserError(f"--weights {spec}: not a preset ({', '.join(PRESETS)}, auto, equal) nor a JSON file")
        try:
            raw = json.loads(path.read_text())
            given = {PRESET_ALIASES.get(k, k): float(v) for k, v in raw.items()}
        except (json.JSONDecodeError, AttributeError, TypeError, ValueError) as exc:
            raise UserError(f"{path}: weights must be a JSON object {{task: number}} ({exc})") from None
        source = f"weights from {path}"
    names = names or {}
    by_column = {t: given[t] if t in given else given.get(names.get(t, t)) for t in tasks}
    given = {t: v for t, v in by_column.items() if v is not None} | {k: v for k, v in given.items() if k not in tasks}
    missing = [t for t in tasks if t not in given]
    if missing:
        raise UserError(f"--weights {spec}: no weight for {', '.join(missing)} (it has {', '.join(sorted(given))})")
    if any(not math.isfinite(given[t]) or given[t] < 0 for t in tasks) or sum(given[t] for t in tasks) <= 0:
        raise UserError(f"--weights {spec}: weights must be finite, non-negative and not all zero")
    extra = sorted(set(given) - set(tasks) - {names.get(t) for t in tasks})
    if extra:
        source += f", renormalised over the benchmarks present (not here: {', '.join(extra)})"
    return Weights(_normalise({t: given[t] for t in tasks}), source)
