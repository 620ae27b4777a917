"""`ptbench collate --compare A:B`: paired differences between two agents on identical cells.

A cell is (base model, task, seed). Per benchmark, each seed both agents ran is one pair: the
difference A − B averaged over the base models both have on that seed; for the weighted average,
the weighted sum of those over the benchmarks (only seeds both agents completed on every benchmark).
A cell only one agent has (or whose score the policy excluded) is named in `unpaired` and left out:
never paired with something else. Per-item scores (eval/samples.jsonl of two `scored` trials, paired
by item id) add the evaluation's sampling noise to the bootstrap.

Differences are in table units (points: scores × 100).
"""

from __future__ import annotations

import csv
import io
import json
import math
import statistics
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ptbench.core.errors import UserError
from ptbench.results.aggregate import Collation
from ptbench.results.paired import Cell, Unit, paired_difference, seeds_needed

SCALE = 100.0
# A percentile bootstrap over fewer seeds than this cannot reach its nominal coverage (with 2 seeds
# it can only ever see 3 distinct means): its interval is shown, marked, and the p-value is the test.
FEW_SEEDS = 5
WEIGHTED = "weighted"


@dataclass
class Comparison:
    a: str
    b: str
    benchmark: str  # a task label, or "weighted"
    diff: float
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    n_pairs: int
    n_cells: int = 0
    items_resampled: bool = False
    std: float | None = None  # over the seeds' paired differences
    unpaired: list[str] = field(default_factory=list)  # "base/task/seed: only A" ...

    def to_json(self) -> dict:
        return {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in asdict(self).items()}


def parse_pairs(specs: list[str], agents: list[str]) -> list[tuple[str, str]]:
    """'A:B' -> (label A, label B): a label as the tables print it, or without its [marks]."""
    pairs = []
    for spec in specs:
        a, sep, b = spec.partition(":")
        if not sep or not a or not b:
            raise UserError(f"--compare {spec!r}: write two agent labels as A:B (agents: {', '.join(agents)})")
        pairs.append((_label(a, agents, spec), _label(b, agents, spec)))
    return pairs


def _label(name: str, agents: list[str], spec: str) -> str:
    if name in agents:
        return name
    found = [a for a in agents if a.split(" [")[0] == name]
    if len(found) != 1:
        why = "is ambiguous" if found else "is not an agent of these results"
        raise UserError(f"--compare {spec}: {name!r} {why} (agents: {', '.join(agents)})")
    return found[0]


def compare(c: Collation, pairs: list[tuple[str, str]], trial_dirs: dict[tuple[str, str], str]) -> list[Comparison]:
    cells, items = _cells(c, trial_dirs)
    out = []
    for a, b in pairs:
        seeds: dict[str, dict[int, list[tuple[str, Cell]]]] = defaultdict(lambda: defaultdict(list))
        unpaired: dict[str, list[str]] = defaultdict(list)
        keys = {k[1:] for k in cells if k[0] in (a, b)}
        for base, task, seed in sorted(keys):
            va, vb = cells.get((a, base, task, seed)), cells.get((b, base, task, seed))
            if va is None or vb is None:
                unpaired[task].append(f"{base}/{task}/seed {seed}: only {a if vb is None else b}")
                continue
            seeds[task][seed].append((base, Cell((va - vb) * SCALE, _item_diffs(items, a, b, base, task, seed))))
        for task in c.tasks:
            units = [Unit(tuple((1 / len(cs), cell) for _, cell in cs)) for _, cs in sorted(seeds[task].items())]
            out.append(_result(a, b, task, units, unpaired[task]))
        complete = sorted(set.intersection(*(set(seeds[t]) for t in c.tasks))) if c.tasks else []
        units = [
            Unit(tuple((c.weights.by_task[t] / len(seeds[t][s]), cell) for t in c.tasks for _, cell in seeds[t][s]))
            for s in complete
        ]
        left = sorted({s for t in c.tasks for s in seeds[t]} - set(complete))
        out.append(_result(a, b, WEIGHTED, units, [f"seed {s}: not paired on every benchmark" for s in left]))
    return out


def _result(a: str, b: str, bench: str, units: list[Unit], unpaired: list[str]) -> Comparison:
    if not units:
        return Comparison(a, b, bench, math.nan, None, None, None, 0, unpaired=unpaired)
    r = paired_difference(units)
    return Comparison(
        a, b, bench, r.diff, r.ci_low, r.ci_high, r.p_value, r.n_pairs, r.n_cells, r.items_resampled, r.std, unpaired
    )


def _cells(c: Collation, trial_dirs: dict[tuple[str, str], str]):
    """(agent, base, task, seed) -> value (mean of merged duplicates); the same key -> item scores
    {id: score} where a single `scored` trial with eval/samples.jsonl makes the cell."""
    values: dict[tuple[str, str, str, int], list[float]] = defaultdict(list)
    sources: dict[tuple[str, str, str, int], list] = defaultdict(list)
    for t in c.trials:
        r = t.record
        key = (r.agent.label, r.base_model.label, r.task.label, r.seed)
        if t.value is not None and not math.isnan(t.value):
            values[key].append(t.value)
            sources[key].append(t)
    cells = {k: statistics.fmean(v) for k, v in values.items()}
    items = {}
    for key, ts in sources.items():
        if len(ts) == 1 and ts[0].rule == "scored":
            d = trial_dirs.get((ts[0].record.campaign, ts[0].record.trial_id))
            scores = _item_scores(Path(d) / "eval" / "samples.jsonl") if d else None
            if scores:
                items[key] = scores
    return cells, items


def _item_scores(path: Path) -> dict[str, float] | None:
    try:
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        return {str(r["id"]): float(r["score"]) for r in rows}
    except (OSError, ValueError, KeyError, TypeError):
        return None  # no per-item scores: the cell is resampled as a whole


def _item_diffs(items, a, b, base, task, seed) -> tuple[float, ...] | None:
    sa, sb = items.get((a, base, task, seed)), items.get((b, base, task, seed))
    if not sa or not sb or sa.keys() != sb.keys() or len(sa) < 2:
        return None  # not the same items: no item-level pairing
    return tuple((sa[k] - sb[k]) * SCALE for k in sorted(sa))


def needed(c: Collation, comparisons: list[Comparison], width: float) -> list[dict]:
    """Seeds for a 95 % interval of full `width` points: per agent and benchmark (from the spread
    over seeds) and per comparison (from the spread of the paired differences)."""
    rows = []
    for (agent, task), s in sorted(c.per_benchmark.items()):
        if s.n >= 2:
            rows.append({"what": agent, "benchmark": task, "seeds_now": s.n, "std": s.std * SCALE,
                         "seeds_needed": seeds_needed(s.std * SCALE, width)})  # fmt: skip
    for agent, s in sorted(c.aggregate.items()):
        if s.n >= 2:
            rows.append({"what": agent, "benchmark": WEIGHTED, "seeds_now": s.n, "std": s.std * SCALE,
                         "seeds_needed": seeds_needed(s.std * SCALE, width)})  # fmt: skip
    for cmp in comparisons:
        if cmp.std is not None:
            rows.append({"what": f"{cmp.a} − {cmp.b}", "benchmark": cmp.benchmark, "seeds_now": cmp.n_pairs,
                         "std": cmp.std, "seeds_needed": seeds_needed(cmp.std, width)})  # fmt: skip
    return rows


# ---- rendering: one set of rows for Markdown, CSV, LaTeX and the report ----

COLUMNS = ["A − B", "benchmark", "diff (points)", "95% CI", "p (permutation)", "pairs"]


def rows(comparisons: list[Comparison]) -> list[list[str]]:
    out = []
    for cmp in comparisons:
        if cmp.n_pairs == 0:
            out.append([f"{cmp.a} − {cmp.b}", cmp.benchmark, "—", "no paired cells", "—", "0"])
            continue
        ci = (
            f"[{cmp.ci_low:+.1f}, {cmp.ci_high:+.1f}]" + (" (seeds × items)" if cmp.items_resampled else "")
            if cmp.ci_low is not None and cmp.ci_high is not None
            else "no CI: one seed"
        )
        if cmp.ci_low is not None and cmp.n_pairs < FEW_SEEDS:
            ci += f" — too narrow with {cmp.n_pairs} seeds"
        p = f"{cmp.p_value:.3g}" if cmp.p_value is not None else "—"
        out.append([f"{cmp.a} − {cmp.b}", cmp.benchmark, f"{cmp.diff:+.1f}", ci, p, str(cmp.n_pairs)])
    return out


def notes(comparisons: list[Comparison]) -> list[str]:
    out = [
        "Paired on identical (base model, task, seed) cells; CI: percentile bootstrap over seeds (and over "
        "test items within a cell where both trials have per-item scores); p: two-sided sign-flip "
        "permutation test over seeds (exact up to 14 seeds). An interval over fewer than 5 seeds is too "
        "narrow (the bootstrap cannot see the spread it needs): read the p-value there."
    ]
    for cmp in comparisons:
        if cmp.unpaired:
            more = len(cmp.unpaired) - 5
            shown = "; ".join(cmp.unpaired[:5]) + (f"; and {more} more" if more > 0 else "")
            out.append(f"Left out of {cmp.a} − {cmp.b} on {cmp.benchmark} (unpaired): {shown}.")
    return out


def to_csv(comparisons: list[Comparison]) -> str:
    buf = io.StringIO()
    fields = ["a", "b", "benchmark", "diff", "ci_low", "ci_high", "p_value", "n_pairs", "n_cells"]
    fields += ["items_resampled", "std"]
    w = csv.writer(buf)
    w.writerow([*fields, "unpaired"])
    for cmp in comparisons:
        row = cmp.to_json()
        w.writerow([*("" if row[f] is None else row[f] for f in fields), " | ".join(cmp.unpaired)])
    return buf.getvalue()


NEEDED_COLUMNS = ["what", "benchmark", "seeds now", "std (points)", "seeds needed"]


def needed_rows(rows_: list[dict]) -> list[list[str]]:
    return [
        [
            r["what"],
            r["benchmark"],
            str(r["seeds_now"]),
            f"{r['std']:.1f}",
            str(r["seeds_needed"]) if r["seeds_needed"] is not None else "more than 10,000",
        ]  # fmt: skip
        for r in rows_
    ]
