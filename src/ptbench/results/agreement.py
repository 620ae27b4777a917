"""Agreement between judges over categorical verdicts (pure functions, no I/O).

`verdicts[i][j]` is judge j's verdict on judged item i (any hashable category). Items where a
judge gave no verdict are left out by the caller. Defined here:

- percent agreement: the mean over items of the share of judge pairs that agree (Fleiss' P-bar;
  with two judges, the share of items on which they agree);
- Fleiss' kappa (Fleiss 1971) for any number of judges >= 2;
- Cohen's kappa for exactly two judges (each judge's own marginals).

A kappa is None where it is undefined: no item, or every verdict in one category (the chance
agreement is 1, so agreement beyond chance cannot be measured). Percent agreement is still given.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ptbench.results.schema import ResultRecord


def fleiss_kappa_counts(counts: Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa from an items × categories table of rater counts (same raters per item)."""
    if not counts:
        return None
    n = sum(counts[0])
    if n < 2 or any(sum(row) != n for row in counts):
        raise ValueError("every item needs the same number (>= 2) of ratings")
    items = len(counts)
    p_bar = sum((sum(c * c for c in row) - n) / (n * (n - 1)) for row in counts) / items
    shares = [sum(row[j] for row in counts) / (items * n) for j in range(len(counts[0]))]
    p_e = sum(p * p for p in shares)
    if p_e >= 1.0 - 1e-12:
        return None
    return (p_bar - p_e) / (1 - p_e)


def _table(verdicts: Sequence[Sequence[Hashable]]) -> list[list[int]]:
    categories = sorted({v for row in verdicts for v in row}, key=repr)
    return [[Counter(row)[c] for c in categories] for row in verdicts]


def percent_agreement(verdicts: Sequence[Sequence[Hashable]]) -> float | None:
    """Mean share of agreeing judge pairs per item; None without items."""
    if not verdicts:
        return None
    n = len(verdicts[0])
    return sum((sum(c * c for c in row) - n) / (n * (n - 1)) for row in _table(verdicts)) / len(verdicts)


def fleiss_kappa(verdicts: Sequence[Sequence[Hashable]]) -> float | None:
    return fleiss_kappa_counts(_table(verdicts)) if verdicts else None


def cohen_kappa(verdicts: Sequence[Sequence[Hashable]]) -> float | None:
    """Cohen's kappa of two judges: (p_o - p_e) / (1 - p_e), p_e from each judge's own marginals."""
    if not verdicts:
        return None
    if any(len(row) != 2 for row in verdicts):
        raise ValueError("Cohen's kappa needs exactly two judges per item")
    items = len(verdicts)
    p_o = sum(a == b for a, b in verdicts) / items
    first, second = Counter(a for a, _ in verdicts), Counter(b for _, b in verdicts)
    p_e = sum(first[c] * second[c] for c in first) / (items * items)
    if p_e >= 1.0 - 1e-12:
        return None
    return (p_o - p_e) / (1 - p_e)


def agreement(verdicts: Sequence[Sequence[Hashable]], judges: int) -> dict[str, Any]:
    """What a trial records: judges, items, percent agreement, kappa and which kappa it is."""
    rows = [list(r) for r in verdicts if len(r) == judges]
    if judges < 2:
        raise ValueError("agreement needs at least two judges")
    kind = "cohen" if judges == 2 else "fleiss"
    kappa = cohen_kappa(rows) if judges == 2 else fleiss_kappa(rows)
    return {
        "judges": judges,
        "items": len(rows),
        "percent_agreement": percent_agreement(rows),
        "kappa": kappa,
        "kappa_kind": kind,
    }


def trial_fields(extra: dict[str, Any]) -> dict[str, Any] | None:
    """One trial's task-judge agreement from its result's extra_metrics (the collation JSON's
    per-trial object: judges, items, percent_agreement, kappa, kappa_kind); None with one judge."""
    if not extra.get("judge_count"):
        return None
    return {
        "judges": extra["judge_count"],
        "items": extra.get("judge_agreement_items"),
        "percent_agreement": _number(extra.get("judge_agreement")),
        "kappa": _number(extra.get("judge_kappa")),
        "kappa_kind": "cohen" if extra.get("judge_kappa_kind") == "cohen" else "fleiss",
    }


def recorded_fields(recorded: Any) -> dict[str, Any] | None:
    """An `agreement()` dict as a record holds it (the integrity judges' agreement, result.json's
    `integrity_judge_agreement`), in the same shape as `trial_fields`; None without one, or when it is
    not such a dict (never a guess)."""
    if not isinstance(recorded, dict):
        return None
    judges, items = recorded.get("judges"), recorded.get("items")
    if not isinstance(judges, int) or isinstance(judges, bool) or judges < 2 or not isinstance(items, int):
        return None
    return {
        "judges": judges,
        "items": items,
        "percent_agreement": _number(recorded.get("percent_agreement")),
        "kappa": _number(recorded.get("kappa")),
        "kappa_kind": "cohen" if recorded.get("kappa_kind") == "cohen" else "fleiss",
    }


def mean_of(trials: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """Several trials' agreement (each `trial_fields`/`recorded_fields`, None where one judge): over
    the trials with several judges (`trials`), the mean kappa (over those whose kappa is defined,
    `kappa_trials`) and the mean percent agreement; the kappa kinds seen. None when no trial had
    several judges."""
    rows = [f for f in trials if f is not None]
    if not rows:
        return None
    kappas = [f["kappa"] for f in rows if f["kappa"] is not None]
    pas = [f["percent_agreement"] for f in rows if f["percent_agreement"] is not None]
    return {
        "trials": len(rows),
        "kappa": sum(kappas) / len(kappas) if kappas else None,
        "kappa_trials": len(kappas),
        "percent_agreement": sum(pas) / len(pas) if pas else None,
        "kappa_kinds": sorted({f["kappa_kind"] for f in rows}),
    }


def _number(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and x == x else None


def fields_text(f: dict[str, Any] | None) -> str:
    """One trial's agreement as a table cell: "κ 0.50 (Fleiss), 80 % agree, 3 judges"; "" for None."""
    if f is None:
        return ""
    kind = "Cohen" if f["kappa_kind"] == "cohen" else "Fleiss"
    k = f"κ {f['kappa']:.2f} ({kind})" if f["kappa"] is not None else "κ undefined"
    p = f"{f['percent_agreement'] * 100:.0f} % agree" if f["percent_agreement"] is not None else "no item"
    return f"{k}, {p}, {f['judges']} judges"


def trial_text(extra: dict[str, Any]) -> str:
    """One trial's task-judge agreement as a table cell (from its extra_metrics); "" with one judge."""
    return fields_text(trial_fields(extra))


def summary_text(f: dict[str, Any]) -> str:
    """`mean_of` as a table cell: "κ 0.30, 70 % agree (n=2)"."""
    k = f"κ {f['kappa']:.2f}" if f["kappa"] is not None else "κ undefined"
    p = f", {f['percent_agreement'] * 100:.0f} % agree" if f["percent_agreement"] is not None else ""
    return f"{k}{p} (n={f['trials']})"


# Whose judges a trial's record holds the agreement of: the judged task's (extra_metrics) and the
# integrity check's (integrity_judge_agreement). Each reader: the trial's fields, or None with one judge.
READERS: dict[str, Callable[[ResultRecord], dict[str, Any] | None]] = {
    "task": lambda r: trial_fields(r.extra_metrics),
    "integrity": lambda r: recorded_fields(r.integrity_judge_agreement),
}
