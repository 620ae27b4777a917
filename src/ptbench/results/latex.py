"""A collation as LaTeX booktabs tables for a paper: n per cell, marks for trials scored by a
fallback rule, footnotes that say what the marks mean, and every label escaped (labels come from
campaign files and may hold any character)."""

from __future__ import annotations

from ptbench.results.aggregate import Collation, Stat
from ptbench.results.compare import COLUMNS
from ptbench.results.compare import notes as comparison_notes
from ptbench.results.compare import rows as comparison_rows
from ptbench.results.coverage import HEADING as COVERAGE_HEADING
from ptbench.results.judge_columns import judge_agreement_cells, judge_sources
from ptbench.results.tables import (
    MEANING,
    RULE_ORDER,
    agent_row_count,
    benchmark_rows,
    marks,
    number,
    per_base_rows,
    rule_summary,
)

LATEX_MARKS = {
    "shown": r"\textdegree{}",
    "base_fallback": r"\dag",
    "excluded": r"\ddag",
    "nan": r"\S",
    "no_baseline": r"\P",
}
_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    "\n": " ",
    "\r": " ",
    # symbols of our own notes that inputenc does not know
    "∝": r"$\propto$",
    "−": "-",
    "≤": r"$\leq$",
    "±": r"$\pm$",
    "—": "---",
    "×": r"$\times$",
    "κ": r"$\kappa$",
}


def escape(text: str) -> str:
    """Every character LaTeX treats specially, in one pass (so an escape is never escaped again)."""
    return "".join(_ESCAPES.get(ch, ch) for ch in str(text))


def tex_cell(stat: Stat | None, scale: float, with_std: bool = True) -> str:
    if stat is None:
        return ""
    text = number(stat, scale, pm=r"$\pm$", with_std=with_std).replace("—", "--")
    text += f" ({stat.n})"
    if stat.incomplete:
        text += rf"\textsuperscript{{$\ast${stat.incomplete}}}"
    m = marks(stat, LATEX_MARKS, join=r"\,")
    return text + (rf"\textsuperscript{{{m}}}" if m else "")


def _table(
    head: list[str], rows: list[list[str]], notes: list[str], caption: str, rule_after: int | None = None
) -> str:
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        r"\small",
        r"\begin{tabular}{" + "l" * 1 + "c" * (len(head) - 1) + "}",
        r"\toprule",
        " & ".join(head) + r" \\",
        r"\midrule",
    ]
    for i, r in enumerate(rows):
        if i == rule_after:
            lines.append(r"\midrule")  # between agents and baselines
        lines.append(" & ".join(r) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\caption{" + caption + "}"]
    lines += [r"\par\smallskip\footnotesize " + n for n in notes]
    lines.append(r"\end{table}")
    return "\n".join(lines)


def footnotes(c: Collation) -> list[str]:
    notes = [r"Cells: mean $\pm$ std over runs (seeds), (n) = runs; baseline rows: mean over models, (n) = models."]
    notes += [
        rf"{LATEX_MARKS[r]}$k$: $k$ trials {escape(MEANING[r])}."
        for r in RULE_ORDER
        if r in LATEX_MARKS and c.rule_totals.get(r)
    ]
    if any(s.incomplete for s in c.aggregate.values()):
        notes.append(r"$\ast k$: $k$ runs lacked a benchmark and are not in the weighted average.")
    notes += [escape(rule_summary(c))] + [escape(n) for n in c.notes]
    return notes


def coverage_notes(c: Collation) -> list[str]:
    """Under the scores table: which integrity checks decided each benchmark's trials."""
    if not any(cov.trials for cov in c.coverage):
        return []
    return [escape(COVERAGE_HEADING)] + [escape(cov.text()) + "." for cov in c.coverage]


def to_latex(c: Collation, scale: float = 100.0) -> str:
    """A standalone-includable fragment: two tables (agents × benchmarks, agents × base models)."""
    head = ["Agent", *(escape(t) for t in c.tasks), "Weighted avg."]
    rows = [
        [escape(r[0]), *r[1:]]
        for r in benchmark_rows(
            c, lambda s: tex_cell(s, scale), lambda s: tex_cell(s, scale), lambda s: tex_cell(s, scale, with_std=False)
        )
    ]
    notes = footnotes(c) + coverage_notes(c)
    for source in judge_sources(c):  # a column only for judges some trial had several of
        cells = judge_agreement_cells(c, source) or {}
        head.append(escape(source.title[0].upper() + source.title[1:]))
        # the agents' rows first, in c.agents' order; the baseline rows get an empty cell
        rows = [[*r, escape(cells.get(c.agents[i], "")) if i < len(c.agents) else ""] for i, r in enumerate(rows)]
        notes.append(escape(source.note))
    out = [
        _table(
            head,
            rows,
            notes,
            f"Scores ({escape(c.policy)} scoring policy).",
            rule_after=len(c.agents) if c.settings and c.agents else None,
        )
    ]
    if c.agents:
        rows = [[escape(r[0]), escape(r[1]), *r[2:]] for r in per_base_rows(c, lambda s: tex_cell(s, scale))]
        n_agent_rows = agent_row_count(c)
        out.append(
            _table(
                ["Agent", "Base model", *(escape(t) for t in c.tasks)],
                rows,
                footnotes(c),
                "Scores per base model.",
                rule_after=n_agent_rows if n_agent_rows < len(rows) else None,
            )
        )
    if c.comparisons:
        out.append(
            _table(
                [escape(h) for h in COLUMNS],
                [[escape(x) for x in r] for r in comparison_rows(c.comparisons)],
                [escape(n) for n in comparison_notes(c.comparisons)],
                "Paired differences between agents (points).",
            )
        )
    return "\n\n".join(out) + "\n"


def document(fragment: str) -> str:
    """A minimal document around the tables, to compile them (tests) or preview them."""
    return "\n".join(
        [
            r"\documentclass{article}",
            r"\usepackage[T1]{fontenc}",
            r"\usepackage[utf8]{inputenc}",
            r"\usepackage{booktabs}",
            r"\usepackage{textcomp}",
            r"\begin{document}",
            fragment,
            r"\end{document}",
            "",
        ]
    )
