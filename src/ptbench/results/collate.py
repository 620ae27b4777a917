"""Aggregate result.json files into tables: agent x task, mean ± std over seeds, n.

Every record is validated against the schema; a file that does not validate is reported, never
silently dropped. Rows are agents (agent / base model when a campaign has several base models).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from ptbench.core.errors import UserError
from ptbench.results.schema import ResultRecord


@dataclass
class Cell:
    values: list[float] = field(default_factory=list)
    unscored: int = 0  # trials without a metric (no model, failures)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.values) if self.values else math.nan

    @property
    def std(self) -> float:
        return statistics.stdev(self.values) if len(self.values) > 1 else 0.0


@dataclass
class Table:
    rows: list[str]
    columns: list[str]
    cells: dict[tuple[str, str], Cell]
    metric_names: dict[str, str]
    problems: list[str]


def find_results(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(p for p in root.rglob("result.json") if ".replaced" not in p.parts)


def load_records(root: Path) -> tuple[list[ResultRecord], list[str]]:
    if not root.exists():
        raise UserError(f"{root}: no such campaign file or results directory")
    records, problems = [], []
    for path in find_results(root):
        try:
            records.append(ResultRecord.model_validate_json(path.read_bytes()))
        except (ValidationError, ValueError) as exc:
            problems.append(f"{path}: not a valid result record ({str(exc).splitlines()[0]})")
    return records, problems


def aggregate(records: list[ResultRecord], problems: list[str] | None = None) -> Table:
    several_bases = len({r.base_model.label for r in records}) > 1
    cells: dict[tuple[str, str], Cell] = defaultdict(Cell)
    metric_names: dict[str, str] = {}
    rows: list[str] = []
    cols: list[str] = []
    for r in sorted(records, key=lambda r: (r.agent.label, r.base_model.label, r.task.label, r.seed)):
        row = f"{r.agent.label} / {r.base_model.label}" if several_bases else r.agent.label
        col = r.task.label
        rows += [row] if row not in rows else []
        cols += [col] if col not in cols else []
        cell = cells[(row, col)]
        if r.primary_metric is not None and r.status in ("completed", "timed_out"):
            cell.values.append(r.primary_metric.value)
            metric_names[col] = r.primary_metric.name
        else:
            cell.unscored += 1
    return Table(rows, cols, dict(cells), metric_names, list(problems or []))


def _fmt(cell: Cell | None, scale: float, latex: bool = False) -> str:
    if cell is None or not cell.values:
        return "—" if not latex else "--"
    pm = r"$\pm$" if latex else "±"
    text = f"{cell.mean * scale:.1f} {pm} {cell.std * scale:.1f} (n={len(cell.values)})"
    if cell.unscored:
        text += f" [{cell.unscored} unscored]"
    return text


def to_markdown(t: Table, scale: float = 100.0) -> str:
    head = "| agent | " + " | ".join(t.columns) + " |"
    sep = "|---|" + "---|" * len(t.columns)
    body = ["| " + row + " | " + " | ".join(_fmt(t.cells.get((row, c)), scale) for c in t.columns) + " |" for row in t.rows]
    return "\n".join([head, sep, *body])


def _latex_escape(s: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"), ("#", r"\#"), ("$", r"\$")):
        s = s.replace(a, b)
    return s


def to_latex(t: Table, scale: float = 100.0) -> str:
    cols = "l" + "c" * len(t.columns)
    lines = [r"\begin{tabular}{" + cols + "}", r"\toprule",
             "Agent & " + " & ".join(_latex_escape(c) for c in t.columns) + r" \\", r"\midrule"]
    for row in t.rows:
        cells = []
        for c in t.columns:
            cell = t.cells.get((row, c))
            cells.append(f"{cell.mean * scale:.1f} $\\pm$ {cell.std * scale:.1f}" if cell and cell.values else "--")
        lines.append(_latex_escape(row) + " & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def to_csv(t: Table) -> str:
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["agent", "task", "metric", "mean", "std", "n", "unscored", "values"])
    for row in t.rows:
        for c in t.columns:
            cell = t.cells.get((row, c))
            if cell is None:
                continue
            w.writerow([row, c, t.metric_names.get(c, ""), "" if not cell.values else f"{cell.mean:.6g}",
                        "" if not cell.values else f"{cell.std:.6g}", len(cell.values), cell.unscored,
                        " ".join(f"{v:.6g}" for v in cell.values)])
    return buf.getvalue()
