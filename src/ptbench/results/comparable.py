"""May these results share a column? Only when they scored the same test set the same way.

Grouped by column (task label), every scored record's test-set hash and evaluation settings are
compared (baseline rows, whose prompt format is what defines them, on task version, judge and
limit only); a difference is refused (one line naming the column, the setting and which trials hold
each value) unless the user asks for mixed columns, in which case it is returned as a warning.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from ptbench.core.errors import UserError
from ptbench.results.schema import ResultRecord


def _judge(e: dict[str, Any]) -> Any:
    judge = e.get("judge")
    if not judge:
        return None
    out = {k: judge.get(k) for k in ("base_url", "model", "temperature", "max_tokens", "reasoning_effort")}
    if e.get("judges"):  # several judges (mean over them): a different metric from any one of them
        out["model"] = e["judges"]
    return out


def _generation(e: dict[str, Any]) -> Any:
    g = e.get("generation") or {}
    return {k: g.get(k) for k in ("max_new_tokens", "retry_max_new_tokens", "temperature", "stop")} if g else None


# What must be equal within a column. The chat template is compared by policy (harness or the
# model's own), not by text: each base-model family has its own harness template.
SETTINGS: dict[str, Callable[[ResultRecord], Any]] = {
    "test-set hash": lambda r: (r.evaluation.get("test_set") or {}).get("sha256", "unrecorded"),
    "task version": lambda r: r.task.version,
    "prompt format": lambda r: r.evaluation.get("prompt_format"),
    "few-shot": lambda r: r.evaluation.get("fewshot"),
    "chat template": lambda r: (r.evaluation.get("chat_template") or {}).get("source", "unrecorded"),
    "generation": lambda r: _generation(r.evaluation),
    "judge": lambda r: _judge(r.evaluation),
    "limit": lambda r: r.evaluation.get("limit"),
}


# `ptbench baseline` rows are defined by their prompt format (base zero-/few-shot prompts, the
# instruct model's own template): only what must hold for any row of a column is compared for them.
BASELINE_SETTINGS = ("task version", "judge", "limit")


_ENCODE = json.JSONEncoder(sort_keys=True).encode  # json.dumps(v, sort_keys=True), without building an encoder per call


@lru_cache(maxsize=4096)
def _shorten(text: str) -> str:
    return text[:12] + "…" if len(text) == 64 and all(c in "0123456789abcdef" for c in text) else text[:80]


def _short(value: Any) -> str:
    return _shorten(value if isinstance(value, str) else "null" if value is None else _ENCODE(value))


def check_comparable(records: list[ResultRecord], *, allow_mixed: bool = False) -> list[str]:
    """Differences within columns, as warnings when `allow_mixed`; otherwise UserError naming them."""
    every, for_baselines = list(SETTINGS.items()), [(s, g) for s, g in SETTINGS.items() if s in BASELINE_SETTINGS]
    # column -> setting -> value -> trial ids; one pass over the records (10,000 of them in a big campaign)
    holders: dict[str, dict[str, dict[str, list[str]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for r in records:
        if r.primary_metric is not None and r.status in ("completed", "timed_out"):
            held = holders[r.task.label]
            for setting, get in for_baselines if r.campaign == "baselines" else every:
                held[setting][_short(get(r))].append(r.trial_id)
    problems = []
    for column, by_setting in holders.items():
        for setting in SETTINGS:
            values = by_setting.get(setting, {})
            if len(values) > 1:
                parts = "; ".join(
                    f"{value} in {len(ids)} ({', '.join(ids[:2])}{', …' if len(ids) > 2 else ''})"
                    for value, ids in sorted(values.items())
                )
                problems.append(f"column '{column}': {setting} differs: {parts}")
    if problems and not allow_mixed:
        raise UserError(
            f"results that were not scored alike would share a column: {problems[0]}"
            f"{f' (and {len(problems) - 1} more)' if len(problems) > 1 else ''}; "
            "re-evaluate them alike, give them different task labels, or pass --allow-mixed"
        )
    return problems
