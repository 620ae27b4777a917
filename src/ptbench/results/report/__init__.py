"""`ptbench report`: a static HTML site of a collation that opens from disk, offline.

index.html holds the headline table, then a table of every trial linking to trials/<id>.html, then
the plots, then the detailed tables. Everything a page links to is inside the site (the raw files of
each trial under raw/, as hard links or copies), so a copied site keeps working.
No JavaScript and nothing fetched from elsewhere; a Content-Security-Policy forbids scripts, so
even a bug in escaping could not run what an agent wrote into its trajectory. The one exception is
`ptbench view` (report/view.py): its pages carry one script of ours, allowed by its hash alone.
"""

from __future__ import annotations

import base64
import hashlib
import math
import re
import shutil
from pathlib import Path

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from ptbench.core.files import atomic_write_text
from ptbench.results import agreement, plots
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

VERSION_PATH = "/__ptbench__/version"  # `ptbench view`'s build number, under its secret prefix

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


# The script `ptbench view` adds to every page: poll the server's build number, reload when it moved.
# Allowed by its hash in the page's Content-Security-Policy (no 'unsafe-inline': agent-written text
# that escaped its escaping still could not run).
LIVE_SCRIPT = (
    "(function(){var m=document.querySelector('meta[name=\"ptbench-version\"]'),mine=m.content,"
    "url=m.getAttribute('data-poll');"
    "function poll(){fetch(url,{cache:'no-store'}).then(function(r){return r.text();})"
    ".then(function(v){if(v.trim()!==mine){location.reload();}else{setTimeout(poll,1000);}})"
    ".catch(function(){setTimeout(poll,3000);});}setTimeout(poll,1000);})();"
)
LIVE_HASH = "sha256-" + base64.b64encode(hashlib.sha256(LIVE_SCRIPT.encode()).digest()).decode()


def live_context(version: int | None, depth: int = 0) -> dict | None:
    """What the templates need for `ptbench view`'s reloading pages; None for the static site. The
    build number is polled relative to the page (`depth` folders below the site's root), so the
    viewer's secret URL prefix is written into no file."""
    if version is None:
        return None
    poll = "../" * depth + VERSION_PATH.lstrip("/")
    return {"version": version, "script": LIVE_SCRIPT, "hash": LIVE_HASH, "poll": poll}


def _png_width(path: Path) -> int:
    """A PNG's width in pixels, from its header (IHDR follows the 8-byte signature)."""
    with path.open("rb") as f:
        head = f.read(24)
    return int.from_bytes(head[16:20], "big")


def _plots(result: Collated, out: Path, tables_dir: Path | None) -> tuple[list[dict], list[str]]:
    """The figures collate drew, copied into the site in FIGURES' order, and one line per figure not drawn."""
    if tables_dir is None:
        return [], []
    c = result.collation
    (out / "plots").mkdir(exist_ok=True)
    shown, notes = [], plots.not_drawn(c, result.costs)
    full_names = [a for a in c.agents if plots.is_abbreviated(a)] + [t for t in c.tasks if plots.is_abbreviated(t)]
    for figure in plots.FIGURES:
        for ext in ("png", "pdf"):
            if (tables_dir / f"{figure}.{ext}").is_file():
                shutil.copyfile(tables_dir / f"{figure}.{ext}", out / "plots" / f"{figure}.{ext}")
            else:  # not drawn this time: no stale copy from an earlier report
                (out / "plots" / f"{figure}.{ext}").unlink(missing_ok=True)
        if (out / "plots" / f"{figure}.png").is_file():
            width = _png_width(out / "plots" / f"{figure}.png")
            shown.append(
                {
                    # shown at 100 px per inch of the figure (2/3 of its 150 dpi): small beside the tables,
                    # the same scale for every figure; the widest span the row
                    "width": round(width * 2 / 3),
                    "wide": width > 6 * 150,
                    "id": figure,
                    "title": plots.TITLES[figure],
                    "png": f"plots/{figure}.png",
                    "pdf": f"plots/{figure}.pdf" if (out / "plots" / f"{figure}.pdf").is_file() else None,
                    "full_names": ", ".join(full_names),
                }
            )
    if not shown and not notes:
        notes = ["plots: not drawn (matplotlib is not installed: pip install 'ptbench[plots]')"]
    return shown, notes


def build_report(result: Collated, out: Path, tables_dir: Path | None = None, *, live: int | None = None) -> Path:
    """Write the site into `out`; plots are copied from `tables_dir` (the collate output) when given.
    `live`: the build number of `ptbench view`, whose pages reload when the server's moves on."""
    c = result.collation
    out.mkdir(parents=True, exist_ok=True)
    (out / "trials").mkdir(exist_ok=True)
    figures, plot_notes = _plots(result, out, tables_dir)
    colors = plots.agent_colors(c.agents)
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
            page = load_trial_page(Path(trial_dir), t, out / "trials", out / "raw" / name.removesuffix(".html"))
            atomic_write_text(
                out / "trials" / name,
                trial_page.render(
                    live=live_context(live, depth=1),  # trials/<page>
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
                "color": colors.get(r.agent.label, "transparent"),
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
        live=live_context(live),
        c=c,
        costs=result.costs,
        warnings=result.warnings,
        plots=figures,
        plot_notes=plot_notes,
        agent_colors=list(colors.items()),
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
