"""A collation as Markdown (on screen), CSV (long format) and JSON (versioned schema).

Every score table carries n and a mark per non-scored rule with its count, and ends with the number
of trials each rule scored, so a reader sees what a mean is made of.
"""

from __future__ import annotations

import csv
import io
import math
import os
import textwrap
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

from ptbench.core.errors import UserError
from ptbench.core.versioned import versioned_dict
from ptbench.results.aggregate import Collation, Stat
from ptbench.results.compare import COLUMNS, NEEDED_COLUMNS, needed_rows
from ptbench.results.compare import notes as comparison_notes
from ptbench.results.compare import rows as comparison_rows
from ptbench.results.cost import AgentCost
from ptbench.results.coverage import HEADING as COVERAGE_HEADING
from ptbench.results.judge_columns import judge_levels, judge_sources, with_judge_agreement
from ptbench.results.paired import mean_ci

COLLATION_SCHEMA = "ptbench.collation"
COLLATION_SCHEMA_VERSION = 1
MARKS = {"shown": "°", "base_fallback": "†", "excluded": "‡", "nan": "§", "no_baseline": "¶"}
MEANING = {
    "scored": "scored their own result",
    "shown": "kept their own score although integrity flagged them or could not check them (integrity policy show)",
    "base_fallback": "took the base model's zero-shot score (scoring policy base_fallback)",
    "excluded": "were left out (scoring policy exclude)",
    "nan": "counted as nan (scoring policy nan)",
    "no_baseline": "counted as nan: base_fallback asked, but no zero-shot score of that base model on that task exists",
}
RULE_ORDER = ("scored", "shown", "base_fallback", "excluded", "nan", "no_baseline")


def marks(stat: Stat, symbols: dict[str, str] = MARKS, join: str = " ") -> str:
    return join.join(f"{symbols[r]}{stat.rules[r]}" for r in RULE_ORDER if r in symbols and stat.rules.get(r))


def number(stat: Stat | None, scale: float, pm: str = "±", with_std: bool = True) -> str:
    if stat is None or not stat.values:
        return "—"
    if math.isnan(stat.mean):
        return "nan"
    return f"{stat.mean * scale:.1f} {pm} {stat.std * scale:.1f}" if with_std else f"{stat.mean * scale:.1f}"


def ci_text(stat: Stat, scale: float) -> str:
    """The 95 % t-interval of a mean over runs (`collate --ci`), or why there is none."""
    ci = mean_ci(stat.values)
    return f"[{ci[0] * scale:.1f}, {ci[1] * scale:.1f}]" if ci else f"[no CI: n={stat.n}]"


def md_cell(stat: Stat | None, scale: float, with_std: bool = True, ci: bool = False) -> str:
    if stat is None:
        return ""
    text = number(stat, scale, with_std=with_std) + (f" {ci_text(stat, scale)}" if ci else "") + f" (n={stat.n})"
    if stat.incomplete:
        text += f" [{stat.incomplete} incomplete]"
    m = marks(stat)
    return f"{text} {m}" if m else text


def rule_summary(c: Collation) -> str:
    totals, reasons = c.rule_totals, c.reasons
    parts = []
    for rule in RULE_ORDER:
        n = totals.get(rule, 0)
        if rule == "shown" and not n:
            continue  # only the integrity policy `show` uses it
        why = ", ".join(f"{k} {reason}" for (r, reason), k in sorted(reasons.items()) if r == rule)
        parts.append(f"{n} {rule}" + (f" ({why})" if why else ""))
    return "Trials by rule: " + "; ".join(parts) + "."


def legend(c: Collation) -> str:
    used = [r for r in RULE_ORDER if r in MARKS and c.rule_totals.get(r)]
    if not used:
        return "Every trial scored its own result." if c.trials else ""
    return "Marks: " + "; ".join(f"{MARKS[r]}k = k trials {MEANING[r]}" for r in used) + "."


def coverage_lines(c: Collation, width: int = 80) -> list[str]:
    """The integrity coverage block under the table: a heading and one item per benchmark, wrapped to
    `width` so the screen stays readable (the table itself gains no column)."""
    if not any(cov.trials for cov in c.coverage):
        return []

    def wrap(text: str, first: str = "", rest: str = "") -> list[str]:
        return textwrap.wrap(
            text,
            width,
            initial_indent=first,
            subsequent_indent=rest,
            break_long_words=False,
            break_on_hyphens=False,
        )

    return [*wrap(COVERAGE_HEADING), *(line for cov in c.coverage for line in wrap(cov.text(), "- ", "  "))]


def _md(head: list[str], rows: list[list[str]]) -> str:
    def line(cells: list[str]) -> str:  # a label with | or a newline would break the table
        return "| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in cells) + " |"

    return "\n".join([line(head), "|" + "---|" * len(head), *(line(r) for r in rows)])


def benchmark_rows(c: Collation, cell, agg_cell, base_cell) -> list[list[str]]:
    rows = [[a, *(cell(c.per_benchmark.get((a, t))) for t in c.tasks), agg_cell(c.aggregate.get(a))] for a in c.agents]
    for s in c.settings:
        agg = c.baseline_aggregate.get(s)
        rows.append(
            [
                s,
                *(base_cell(c.baselines.get((s, t))) for t in c.tasks),
                base_cell(Stat([agg]) if agg is not None else None),
            ]
        )
    return rows


def per_base_rows(c: Collation, cell) -> list[list[str]]:
    """agent × base model rows, then each baseline setting × model (the models a fallback draws on);
    `agent_row_count` tells where the baselines start."""
    bases = sorted({b for (_, b, _) in c.per_base})
    rows = [
        [a, b, *(cell(c.per_base.get((a, b, t))) for t in c.tasks)]
        for a in c.agents
        for b in bases
        if any((a, b, t) in c.per_base for t in c.tasks)
    ]
    models = sorted(
        {(s, m) for (s, m, _) in c.baseline_per_model if s in c.settings},
        key=lambda sm: (c.settings.index(sm[0]), sm[1]),
    )
    rows += [[s, m, *(cell(c.baseline_per_model.get((s, m, t))) for t in c.tasks)] for s, m in models]
    return rows


def agent_row_count(c: Collation) -> int:
    return len({(a, b) for (a, b, _) in c.per_base})


def to_markdown(c: Collation, costs: list[AgentCost] | None = None, scale: float = 100.0) -> str:
    out = [f"Scoring policy: {c.policy}" + (f" (integrity: {c.integrity_policy})" if c.integrity_policy else ""), ""]
    head, rows = with_judge_agreement(
        c,
        ["agent", *c.tasks, "weighted avg"],
        benchmark_rows(
            c,
            lambda s: md_cell(s, scale, ci=c.ci),
            lambda s: md_cell(s, scale, ci=c.ci),
            lambda s: md_cell(s, scale, with_std=False),
        ),
    )
    out.append(_md(head, rows))
    out += ["", rule_summary(c), legend(c), *c.notes]
    out += [source.note for source in judge_sources(c)]
    if c.ci:
        out.append("[lo, hi]: 95 % Student-t interval of the mean over runs (seeds).")
    if c.settings:
        out.append("Baseline rows: mean over their models (n = models), no agent involved.")
    if coverage := coverage_lines(c):
        out += ["", *coverage]
    out += comparison_markdown(c)
    if c.agents:
        out += ["", _md(["agent", "base model", *c.tasks], per_base_rows(c, lambda s: md_cell(s, scale)))]
        out.append("n = runs (seeds). " + rule_summary(c))
    if costs:
        out += ["", cost_markdown(costs)]
    return "\n".join(out)


def comparison_markdown(c: Collation) -> list[str]:
    out: list[str] = []
    if c.comparisons:
        out += ["", "Paired comparisons (points)", "", _md(COLUMNS, comparison_rows(c.comparisons)), ""]
        out += comparison_notes(c.comparisons)
    if c.seeds_width is not None:
        out += ["", f"Seeds for a 95 % CI of width {c.seeds_width:g} points (from the observed spread)", ""]
        rows = needed_rows(c.seeds_needed)
        out.append(_md(NEEDED_COLUMNS, rows) if rows else "No cell has two seeds yet: the spread is not known.")
    return out


def cost_markdown(costs: list[AgentCost]) -> str:
    head = [
        "agent",
        "trials",
        "hours used",
        "tokens in",
        "tokens out",
        "cache read",
        "cache write",
        "cost (USD)",
        "tool calls",
        "continuations",
        "failures",
    ]
    rows = [
        [
            r.agent,
            str(r.trials),
            f"{r.hours_used:.2f}",
            f"{r.input_tokens:,}",
            f"{r.output_tokens:,}",
            f"{r.cache_read_tokens:,}",
            f"{r.cache_write_tokens:,}",
            "n/a" if r.cost_usd is None else f"{r.cost_usd:.2f}",
            str(r.tool_calls),
            str(r.continuations),
            ", ".join(f"{k} {n}" for k, n in r.failures.items()) or "none",
        ]
        for r in costs
    ]
    return _md(head, rows)


def _num(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def _stat_json(stat: Stat, ci: bool = False) -> dict:
    interval = mean_ci(stat.values) if ci else None
    return {
        **({"ci_low": interval[0], "ci_high": interval[1]} if interval else {}),
        "mean": _num(stat.mean) if stat.values else None,
        "std": _num(stat.std) if stat.values else None,
        "n": stat.n,
        "values": [_num(v) for v in stat.values],
        "incomplete": stat.incomplete,
        **{f"n_{r}": stat.rules.get(r, 0) for r in RULE_ORDER},
    }


def read_collation(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A collation's `results.json` (what `to_json` wrote), for a script or notebook that reads it:
    through core.versioned, so one written by a newer ptbench is refused with one line."""
    data = versioned_dict(Path(path).read_bytes(), current=COLLATION_SCHEMA_VERSION, where=str(path))
    if data.get("schema") != COLLATION_SCHEMA:
        raise UserError(f"{path}: schema {data.get('schema')!r} is not a collation ({COLLATION_SCHEMA})")
    return data


def to_json(c: Collation, costs: list[AgentCost]) -> dict:
    at = judge_levels(c)
    sources = judge_sources(c)

    def judges(level: str, k: Hashable) -> dict[str, Any]:
        return {f"{prefix}_agreement": f for prefix, f in at(level, k).items()}

    return {
        "schema": COLLATION_SCHEMA,
        "schema_version": COLLATION_SCHEMA_VERSION,
        "policy": c.policy,
        "integrity_policy": c.integrity_policy,
        "weights": {"source": c.weights.source, "by_task": c.weights.by_task},
        "tasks": c.tasks,
        "rule_totals": {r: c.rule_totals.get(r, 0) for r in RULE_ORDER},
        "reasons": [{"rule": r, "reason": why, "trials": n} for (r, why), n in sorted(c.reasons.items())],
        "notes": c.notes,
        "coverage": [cov.to_json() for cov in c.coverage],
        "benchmark": [
            {"agent": a, "task": t, **_stat_json(s, c.ci), **judges("cell", (a, t))}
            for (a, t), s in sorted(c.per_benchmark.items())
        ],
        "aggregate": [
            {"agent": a, **_stat_json(s, c.ci), **judges("agent", a)} for a, s in sorted(c.aggregate.items())
        ],
        "comparisons": [cmp.to_json() for cmp in c.comparisons],
        **({"seeds_needed": {"width": c.seeds_width, "rows": c.seeds_needed}} if c.seeds_width is not None else {}),
        "per_base_model": [
            {"agent": a, "base_model": b, "task": t, **_stat_json(s), **judges("base", (a, b, t))}
            for (a, b, t), s in sorted(c.per_base.items())
        ],
        "baselines": [{"setting": s, "task": t, **_stat_json(st)} for (s, t), st in sorted(c.baselines.items())],
        "baseline_aggregate": [{"setting": s, "mean": _num(v)} for s, v in c.baseline_aggregate.items()],
        "cost": [r.to_json() for r in costs],
        "trials": [
            {
                "trial_id": t.record.trial_id,
                "campaign": t.record.campaign,
                "agent": t.record.agent.label,
                "base_model": t.record.base_model.label,
                "task": t.record.task.label,
                "seed": t.record.seed,
                "status": t.record.status,
                "integrity": t.record.integrity,
                "rule": t.rule,
                "reason": t.reason,
                "value": _num(t.value),
                **{f"{source.prefix}_agreement": source.of(t.record) for source in sources},
            }
            for t in c.trials
        ],
    }


def to_csv(c: Collation) -> str:
    at = judge_levels(c)
    sources = judge_sources(c)  # three columns each, only for a source some trial had several judges of
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(
        [
            "table",
            "agent",
            "base_model",
            "task",
            "mean",
            "std",
            "n",
            *(f"n_{r}" for r in RULE_ORDER),
            "incomplete",
            "values",
            "integrity_coverage",  # on the coverage rows (one per benchmark, n = its trials with a score)
            *(f"{source.prefix}_{col}" for source in sources for col in ("trials", "kappa", "agreement")),
        ]
    )

    def fmt(x: float | None) -> str:
        return "" if x is None or math.isnan(x) else f"{x:.6g}"

    def judges(where: tuple[str, Hashable] | None) -> list[Any]:
        """The judge columns of a row: (level, key) of an agent's row; None for a baseline row."""
        found = at(*where) if where else dict.fromkeys(source.prefix for source in sources)
        return [x for f in found.values() for x in ([""] * 3 if f is None else _judge_csv(f, fmt))]

    def row(table: str, agent: str, base: str, task: str, s: Stat, where: tuple[str, Hashable] | None = None) -> None:
        w.writerow(
            [
                table,
                agent,
                base,
                task,
                fmt(s.mean) if s.values else "",
                fmt(s.std) if s.values else "",
                s.n,
                *(s.rules.get(r, 0) for r in RULE_ORDER),
                s.incomplete,
                " ".join(fmt(v) or "nan" for v in s.values),
                "",
                *judges(where),
            ]
        )

    for (a, t), s in sorted(c.per_benchmark.items()):
        row("benchmark", a, "", t, s, ("cell", (a, t)))
    for a, s in sorted(c.aggregate.items()):
        row("aggregate", a, "", "weighted_avg", s, ("agent", a))
    for (a, b, t), s in sorted(c.per_base.items()):
        row("per_base_model", a, b, t, s, ("base", (a, b, t)))
    for (setting, t), s in sorted(c.baselines.items()):
        row("baseline", setting, "", t, s)
    for setting, v in c.baseline_aggregate.items():
        row("baseline", setting, "", "weighted_avg", Stat([v]))
    blank = [""] * (len(RULE_ORDER) + 2)  # n_<rule>, incomplete, values
    for cov in c.coverage:  # n = the benchmark's trials with a score of their own
        w.writerow(["coverage", "", "", cov.task, "", "", cov.trials, *blank, cov.text(), *[""] * (3 * len(sources))])
    return buf.getvalue()


def _judge_csv(f: dict[str, Any], fmt: Callable[[float | None], str]) -> list[Any]:
    return [f["trials"], fmt(f["kappa"]), fmt(f["percent_agreement"])]


def cost_csv(costs: list[AgentCost]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    fields = [
        "agent",
        "trials",
        "hours_used",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "cost_usd",
        "tool_calls",
        "continuations",
        "failures",
    ]
    w.writerow(fields)
    for r in costs:
        d = r.to_json()
        d["failures"] = " ".join(f"{k}={n}" for k, n in r.failures.items())
        w.writerow(["" if d[f] is None else d[f] for f in fields])
    return buf.getvalue()
