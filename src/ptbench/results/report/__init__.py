"""`ptbench report`: a static HTML site of a collation that opens from disk, offline.

index.html holds the tables, the plots and a table of every trial linking to trials/<id>.html.
No JavaScript and nothing fetched from elsewhere; a Content-Security-Policy forbids scripts, so
even a bug in escaping could not run what an agent wrote into its trajectory.
"""

from __future__ import annotations

import math
import re
import shutil
from pathlib import Path

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from ptbench.core.files import atomic_write_text
from ptbench.results import agreement
from ptbench.results.collate import Collated
from ptbench.results.compare import COLUMNS
from ptbench.results.compare import notes as comparison_notes
from ptbench.results.compare import rows as comparison_rows
from ptbench.results.coverage import HEADING as COVERAGE_HEADING
from ptbench.results.coverage import counts_text, verdict_text
from ptbench.results.judge_columns import judge_sources, with_judge_agreement
from ptbench.results.policy import integrity_of
from ptbench.results.report.trial_page import load_trial_page
from ptbench.results.tables import (
    MARKS,
    MEANING,
    RULE_ORDER,
    benchmark_rows,
    legend,
    md_cell,
    per_base_rows,
    rule_summary,
)

_env = Environment(
    loader=PackageLoader("ptbench.results.report", "templates"),
    autoescape=select_autoescape(["html", "j2"]),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def page_name(campaign: str, trial_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", f"{campaign}__{trial_id}")[:200] + ".html"


def _score(value: float | None) -> str:
    if value is None:
        return "excluded"
    return "nan" if math.isnan(value) else f"{value * 100:.1f}"


def build_report(result: Collated, out: Path, tables_dir: Path | None = None) -> Path:
    """Write the site into `out`; plots are copied from `tables_dir` (the collate output) when given."""
    c = result.collation
    out.mkdir(parents=True, exist_ok=True)
    (out / "trials").mkdir(exist_ok=True)
    plots = []
    if tables_dir is not None:
        (out / "plots").mkdir(exist_ok=True)
        for png in sorted(tables_dir.glob("*.png")):
            shutil.copyfile(png, out / "plots" / png.name)
            plots.append({"png": f"plots/{png.name}", "pdf": png.with_suffix(".pdf").name})
        for pdf in sorted(tables_dir.glob("*.pdf")):
            shutil.copyfile(pdf, out / "plots" / pdf.name)
    trial_page = _env.get_template("trial.html.j2")
    sources = judge_sources(c)  # whose judges some trial had several of: a column each
    rows = []
    for t in sorted(
        c.trials,
        key=lambda t: (
            t.record.agent.label,
            t.record.base_model.label,
            t.record.task.label,
            t.record.seed,
            t.record.campaign,
        ),
    ):
        r = t.record
        name = page_name(r.campaign, r.trial_id)
        trial_dir = result.loaded.trial_dirs.get((r.campaign, r.trial_id))
        if trial_dir is not None:
            page = load_trial_page(Path(trial_dir), t, out / "trials")
            atomic_write_text(
                out / "trials" / name,
                trial_page.render(
                    p=page,
                    score=_score(t.value),
                    meaning=MEANING,
                    judges=[(s.title, agreement.fields_text(s.of(r))) for s in sources if s.of(r) is not None],
                ),
            )
        rows.append(
            {
                "href": f"trials/{name}",
                "id": r.trial_id,
                "campaign": r.campaign,
                "agent": r.agent.label,
                "base": r.base_model.label,
                "task": r.task.label,
                "seed": r.seed,
                "status": r.status,
                "integrity": integrity_of(r),
                "integrity_text": verdict_text(integrity_of(r)),
                "rule": t.rule,
                "reason": t.reason,
                "score": _score(t.value),
                "hours": f"{r.budget.solve_seconds_used / 3600:.2f}",
                "judges": [agreement.fields_text(s.of(r)) for s in sources],
            }
        )
    head, main_rows = with_judge_agreement(
        c,
        [],
        benchmark_rows(
            c,
            lambda s: md_cell(s, 100.0, ci=c.ci),
            lambda s: md_cell(s, 100.0, ci=c.ci),
            lambda s: md_cell(s, 100.0, with_std=False),
        ),
    )
    index = _env.get_template("index.html.j2").render(
        c=c,
        costs=result.costs,
        warnings=result.warnings,
        plots=plots,
        trials=rows,
        judge_heads=head,  # the judge agreement columns appended, if any
        judge_note=" ".join(s.note for s in sources),
        trial_judge_heads=[s.title for s in sources],
        main_rows=main_rows,
        comparison_head=COLUMNS,
        comparison_rows=comparison_rows(c.comparisons),
        comparison_notes=comparison_notes(c.comparisons) if c.comparisons else [],
        base_rows=per_base_rows(c, lambda s: md_cell(s, 100.0)),
        coverage=[
            {
                "task": cov.task,
                "trials": cov.trials,
                "decided": cov.decided_text()
                if cov.verdicts
                else ("no integrity check ran" if cov.trials else "none has a score of its own"),
                "not_applicable": ", ".join(cov.not_applicable),
                "undecided": "; ".join(f"{name}: {counts_text(cov.verdicts[name])}" for name in cov.undecided),
            }
            for cov in c.coverage
        ],
        coverage_heading=COVERAGE_HEADING.removeprefix("Integrity coverage: ").capitalize(),
        summary=rule_summary(c),
        legend=legend(c),
        marks=MARKS,
        rules=RULE_ORDER,
    )
    atomic_write_text(out / "index.html", index)
    return out / "index.html"
