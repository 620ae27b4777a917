"""Figures beside the tables, each as PNG and PDF: per-benchmark bars with error bars per agent; the
weighted average per agent with the baselines as lines; score vs time used; score vs cost."""

from __future__ import annotations

import math
from pathlib import Path

from ptbench.results.aggregate import Collation
from ptbench.results.cost import AgentCost

SCALE = 100.0
MAX_WIDTH_IN = 12.0


def _matplotlib():
    """matplotlib's Figure and Agg canvas, or None when it is not installed. Not pyplot: its figure
    managers and its import (a tenth of a second) serve interactive use, and a figure of our own is
    freed when the last reference goes, without plt.close."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg  # no display on cluster nodes
        from matplotlib.figure import Figure
    except ImportError:
        return None
    return Figure, FigureCanvasAgg


def _subplots(mpl, figsize: tuple[float, float]):
    figure, canvas = mpl
    fig = figure(figsize=figsize)
    canvas(fig)
    return fig, fig.subplots()


def _save(fig, out: Path, stem: str) -> list[Path]:
    from matplotlib.layout_engine import TightLayoutEngine  # loaded with matplotlib.figure: no cost here

    paths = []
    # What fig.tight_layout() does, without the placeholder layout engine it leaves on the figure:
    # savefig lays out (draws) a figure that has one once more before drawing it, a third of each
    # figure's time for the same bytes.
    # tight_layout()'s own arguments; it passes rect=None, which matplotlib's stub does not allow
    TightLayoutEngine(pad=1.08, rect=None).execute(fig)  # type: ignore[arg-type]
    for ext in ("png", "pdf"):
        path = out / f"{stem}.{ext}"
        tmp = out / f".{stem}.tmp.{ext}"
        try:
            fig.savefig(tmp, dpi=150, metadata={"CreationDate": None} if ext == "pdf" else None)
            tmp.replace(path)  # atomic, like every file another process may read
        finally:
            tmp.unlink(missing_ok=True)  # a failed figure leaves nothing behind
        paths.append(path)
    return paths


def _ms(stat) -> tuple[float, float]:
    if stat is None or not stat.values or math.isnan(stat.mean):
        return 0.0, 0.0
    return stat.mean * SCALE, stat.std * SCALE


def benchmark_bars(mpl, c: Collation, out: Path) -> list[Path]:
    n = max(1, len(c.agents))
    width = 0.8 / n
    # capped: a paper's figure is at most a page wide (uncapped, 10 agents x 7 benchmarks made it 38 inches)
    fig, ax = _subplots(mpl, (min(MAX_WIDTH_IN, max(4.0, 1.1 * len(c.tasks) * max(1.0, n / 2))), 3.5))
    for i, agent in enumerate(c.agents):
        ms = [_ms(c.per_benchmark.get((agent, t))) for t in c.tasks]
        xs = [j + (i - (n - 1) / 2) * width for j in range(len(c.tasks))]
        ax.bar(xs, [m for m, _ in ms], width, yerr=[s for _, s in ms], capsize=3, label=agent)
    ax.set_xticks(range(len(c.tasks)), c.tasks, rotation=20 if len(c.tasks) > 4 else 0)
    ax.set_ylabel("score (mean ± std over runs)")
    if c.agents:
        ax.legend(fontsize="small", frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.spines[["top", "right"]].set_visible(False)
    return _save(fig, out, "benchmarks")


def aggregate_bars(mpl, c: Collation, out: Path) -> list[Path]:
    fig, ax = _subplots(mpl, (min(MAX_WIDTH_IN, max(4.0, 0.9 * len(c.agents) + 2)), 3.5))
    ms = [_ms(c.aggregate.get(a)) for a in c.agents]
    ax.bar(range(len(c.agents)), [m for m, _ in ms], 0.6, yerr=[s for _, s in ms], capsize=4, color="tab:blue")
    ax.set_xticks(range(len(c.agents)), c.agents, rotation=20 if len(c.agents) > 4 else 0)
    styles = ["--", ":", "-.", (0, (5, 1))]
    for k, (setting, value) in enumerate(c.baseline_aggregate.items()):
        ax.axhline(value * SCALE, color="gray", linestyle=styles[k % len(styles)], linewidth=1, label=setting)
    if c.baseline_aggregate:
        ax.legend(fontsize="small", frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_ylabel("weighted average (mean ± std over runs)")
    ax.spines[["top", "right"]].set_visible(False)
    return _save(fig, out, "aggregate")


def score_vs(mpl, c: Collation, costs: list[AgentCost], out: Path, what: str) -> list[Path]:
    fig, ax = _subplots(mpl, (4.5, 3.5))
    by_agent = {r.agent: r for r in costs}
    shown = 0
    for agent in c.agents:
        row, stat = by_agent.get(agent), c.aggregate.get(agent)
        if row is None or not row.trials or stat is None or not stat.values or math.isnan(stat.mean):
            continue
        x = (
            row.hours_used / row.trials
            if what == "time"
            else (row.cost_usd / row.trials if row.cost_usd is not None else None)
        )
        if x is None:
            continue
        m, s = _ms(stat)
        ax.errorbar([x], [m], yerr=[s], fmt="o", capsize=3, label=agent)
        shown += 1
    if not shown:
        ax.text(
            0.5,
            0.5,
            "no agent reported a cost" if what == "cost" else "no scored agent",
            ha="center",
            va="center",
            transform=ax.transAxes,
        )
    elif shown <= 10:
        ax.legend(fontsize="small", frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_xlabel("hours used per trial" if what == "time" else "cost per trial (USD)")
    ax.set_ylabel("weighted average")
    ax.spines[["top", "right"]].set_visible(False)
    return _save(fig, out, f"score_vs_{what}")


FIGURES = ("benchmarks", "aggregate", "score_vs_time", "score_vs_cost")


def draw(mpl, figure: str, c: Collation, costs: list[AgentCost], out: Path) -> list[Path]:
    """One of FIGURES, as PNG and PDF."""
    if figure == "benchmarks":
        return benchmark_bars(mpl, c, out)
    if figure == "aggregate":
        return aggregate_bars(mpl, c, out)
    return score_vs(mpl, c, costs, out, figure.removeprefix("score_vs_"))


def write_plots(c: Collation, costs: list[AgentCost], out: Path, figures: tuple[str, ...] = FIGURES) -> list[Path]:
    """Every figure into `out`; [] when matplotlib is not installed (pip install 'ptbench[plots]')."""
    mpl = _matplotlib()
    if mpl is None:
        return []
    return [path for figure in figures for path in draw(mpl, figure, c, costs, out)]
