"""Figures beside the tables, each as PNG and PDF: per-benchmark bars with error bars per agent; the
weighted average per agent with the baselines as lines; score vs time used; score vs cost.

Every figure gives an agent the same colour (`agent_colors`: one palette over the sorted labels, also
used by the report's legend); scores are drawn on 0..100 whatever the data; a figure with nothing to
show is not drawn (`empty_reason` says why, in one line) and its old files are removed. Each PNG
carries the colours its artists were drawn in (`COLORS_KEY`, read back by the report's tests).
"""

from __future__ import annotations

import json
import math
import textwrap
from pathlib import Path

from ptbench.results.aggregate import Collation
from ptbench.results.cost import AgentCost

SCALE = 100.0
MAX_WIDTH_IN = 12.0
# matplotlib's tab10, then tab20's lighter shades: distinct on white, and beyond 20 agents colours repeat
PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5",
)  # fmt: skip
COLORS_KEY = "ptbench:agent-colors"  # the PNG text chunk: {"agent": ["#rrggbb", ...]} as drawn
GID = "agent:"  # the artists of an agent carry gid "agent:<label>"
LINE_CHARS = 12  # a tick label is wrapped to lines this long...
MAX_LINES = 2  # ...and abbreviated with "…" beyond this many (the report lists the full names)
TICK_FONT_PT = 8.0
CHAR_IN = 0.6 * TICK_FONT_PT / 72  # the average width of a character at that size, inches
LINE_IN = 1.25 * TICK_FONT_PT / 72
LEGEND_ROWS = 14  # entries a legend column holds beside a 3.5-inch figure
LEGEND_CHAR_IN = 0.6 * 8.3 / 72  # legend text ("small": 8.3 pt)
MARGIN_IN = 0.8  # the y axis's label and ticks


def agent_colors(agents) -> dict[str, str]:
    """One colour per agent label, from the sorted labels: the same agent has the same colour in every
    figure and on the report's pages, whatever subset of agents a figure shows."""
    return {a: PALETTE[i % len(PALETTE)] for i, a in enumerate(sorted(set(agents)))}


def short(label: str, chars: int = 2 * LINE_CHARS) -> str:
    """`label` in at most `chars` characters: its head and its tail around '…' (the tail is what tells
    `agent-run-1` from `agent-run-2`)."""
    if len(label) <= chars:
        return label
    head = (chars - 1) // 2
    return label[:head] + "…" + label[len(label) - (chars - 1 - head) :]


def is_abbreviated(label: str) -> bool:
    return len(label) > LINE_CHARS * MAX_LINES


def tick_label(label: str) -> str:
    """`label` in at most MAX_LINES lines of LINE_CHARS: wrapped at spaces and hyphens where that
    fits, else cut into pieces; longer labels are shortened (`short`)."""
    lines = textwrap.wrap(label, LINE_CHARS, break_on_hyphens=True)
    if len(lines) <= MAX_LINES:
        return "\n".join(lines)
    s = short(label, LINE_CHARS * MAX_LINES)
    return "\n".join(s[k : k + LINE_CHARS] for k in range(0, len(s), LINE_CHARS))


def _legend(ax, n: int) -> None:
    """The legend right of the axes, its labels shortened (the report lists the full names), in
    columns of at most LEGEND_ROWS so that it stays within the figure's height."""
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(
        handles,
        [short(label) for label in labels],
        fontsize="small",
        frameon=False,
        loc="upper left",
        bbox_to_anchor=(1.0, 1.0),
        ncol=max(1, math.ceil(n / LEGEND_ROWS)),
    )


def _legend_in(labels: list[str]) -> float:
    """About how wide `_legend` draws these labels, inches."""
    if not labels:
        return 0.0
    cols = max(1, math.ceil(len(labels) / LEGEND_ROWS))
    return cols * (max(len(short(label)) for label in labels) * LEGEND_CHAR_IN + 0.5)


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


def _drawn_colors(fig) -> dict[str, list[str]]:
    """The colours the figure's agent artists were drawn in, read from the artists themselves (not
    from the palette), so a figure that strayed from `agent_colors` shows it."""
    from matplotlib.colors import to_hex

    seen: dict[str, set[str]] = {}
    for ax in fig.axes:
        for artist in [*ax.patches, *ax.lines]:
            gid = artist.get_gid() or ""
            if gid.startswith(GID):
                color = artist.get_facecolor() if hasattr(artist, "get_height") else artist.get_color()
                seen.setdefault(gid.removeprefix(GID), set()).add(to_hex(color))
    return {agent: sorted(colors) for agent, colors in sorted(seen.items())}


def _save(fig, out: Path, stem: str) -> list[Path]:
    from matplotlib.layout_engine import TightLayoutEngine  # loaded with matplotlib.figure: no cost here

    paths = []
    # What fig.tight_layout() does, without the placeholder layout engine it leaves on the figure:
    # savefig lays out (draws) a figure that has one once more before drawing it, a third of each
    # figure's time for the same bytes.
    # tight_layout()'s own arguments; it passes rect=None, which matplotlib's stub does not allow
    TightLayoutEngine(pad=1.08, rect=None).execute(fig)  # type: ignore[arg-type]
    colors = json.dumps(_drawn_colors(fig), sort_keys=True)
    for ext in ("png", "pdf"):
        path = out / f"{stem}.{ext}"
        tmp = out / f".{stem}.tmp.{ext}"
        try:
            fig.savefig(tmp, dpi=150, metadata={"CreationDate": None} if ext == "pdf" else {COLORS_KEY: colors})
            tmp.replace(path)  # atomic, like every file another process may read
        finally:
            tmp.unlink(missing_ok=True)  # a failed figure leaves nothing behind
        paths.append(path)
    return paths


def _ms(stat) -> tuple[float, float]:
    if not _has(stat):
        return 0.0, 0.0
    return stat.mean * SCALE, stat.std * SCALE


def _has(stat) -> bool:
    return stat is not None and bool(stat.values) and not math.isnan(stat.mean)


def _score_axis(ax, tops: list[float]) -> None:
    """Scores on 0..100 (higher when an error bar reaches past 100): an all-zero figure is not drawn
    on matplotlib's -0.04..0.04."""
    ax.set_ylim(0, max([SCALE, *(t for t in tops if not math.isnan(t))]))


def _x_labels(ax, labels: list[str], axes_in: float) -> None:
    """Side by side when they fit their slots (wrapped: tick_label); else at 45° when neighbours are
    far enough apart across the text; else vertical on one line (`short`). Estimated from the label
    lengths and the axes' width (`axes_in`, inches), without drawing the figure."""
    if not labels:
        ax.set_xticks([])
        return
    shown = [tick_label(label) for label in labels]
    slot = axes_in / len(labels)
    widest = max(len(line) for s in shown for line in s.split("\n")) * CHAR_IN
    lines = max(s.count("\n") + 1 for s in shown)
    if widest <= 0.9 * slot:
        ax.set_xticks(range(len(labels)), shown, fontsize=TICK_FONT_PT)
    elif slot * math.sin(math.radians(45)) >= 1.2 * lines * LINE_IN:
        ax.set_xticks(range(len(labels)), shown, fontsize=TICK_FONT_PT, rotation=45, ha="right", rotation_mode="anchor")
    else:
        ax.set_xticks(range(len(labels)), [short(label) for label in labels], fontsize=TICK_FONT_PT, rotation=90)


def benchmark_bars(mpl, c: Collation):
    n = max(1, len(c.agents))
    width = 0.8 / n
    colors = agent_colors(c.agents)
    # capped: a paper's figure is at most a page wide (uncapped, 10 agents x 7 benchmarks made it 38 inches)
    fig_w = min(MAX_WIDTH_IN, max(4.0, 1.1 * len(c.tasks) * max(1.0, n / 2)))
    fig, ax = _subplots(mpl, (fig_w, 3.5))
    tops = []
    for i, agent in enumerate(c.agents):
        ms = [_ms(c.per_benchmark.get((agent, t))) for t in c.tasks]
        xs = [j + (i - (n - 1) / 2) * width for j in range(len(c.tasks))]
        bars = ax.bar(
            xs, [m for m, _ in ms], width, yerr=[s for _, s in ms], capsize=3, label=agent, color=colors[agent]
        )
        for patch in bars.patches:
            patch.set_gid(GID + agent)
        tops += [m + s for m, s in ms]
    _x_labels(ax, c.tasks, fig_w - MARGIN_IN - _legend_in(c.agents))
    _score_axis(ax, tops)
    ax.set_ylabel("score (mean ± std over runs)")
    if c.agents:
        _legend(ax, len(c.agents))
    ax.spines[["top", "right"]].set_visible(False)
    return fig


def aggregate_bars(mpl, c: Collation):
    colors = agent_colors(c.agents)
    fig_w = min(MAX_WIDTH_IN, max(4.0, 0.9 * len(c.agents) + 2))
    fig, ax = _subplots(mpl, (fig_w, 3.5))
    ms = [_ms(c.aggregate.get(a)) for a in c.agents]
    bars = ax.bar(
        range(len(c.agents)),
        [m for m, _ in ms],
        0.6,
        yerr=[s for _, s in ms],
        capsize=4,
        color=[colors[a] for a in c.agents],
    )
    for patch, agent in zip(bars.patches, c.agents, strict=True):
        patch.set_gid(GID + agent)
    _x_labels(ax, c.agents, fig_w - MARGIN_IN - _legend_in(list(c.baseline_aggregate)))
    styles = ["--", ":", "-.", (0, (5, 1))]
    for k, (setting, value) in enumerate(c.baseline_aggregate.items()):
        ax.axhline(value * SCALE, color="gray", linestyle=styles[k % len(styles)], linewidth=1, label=setting)
    if c.baseline_aggregate:
        _legend(ax, len(c.baseline_aggregate))
    _score_axis(ax, [m + s for m, s in ms] + [v * SCALE for v in c.baseline_aggregate.values()])
    ax.set_ylabel("weighted average (mean ± std over runs)")
    ax.spines[["top", "right"]].set_visible(False)
    return fig


def _points(c: Collation, costs: list[AgentCost], what: str) -> list[tuple[str, float, float, float]]:
    """(agent, x, mean, std) of each agent with a weighted average and, for cost, a reported cost."""
    by_agent = {r.agent: r for r in costs}
    points = []
    for agent in c.agents:
        row, stat = by_agent.get(agent), c.aggregate.get(agent)
        if row is None or not row.trials or not _has(stat):
            continue
        if what == "time":
            x = row.hours_used / row.trials
        elif row.cost_usd is not None:
            x = row.cost_usd / row.trials
        else:
            continue
        points.append((agent, x, *_ms(stat)))
    return points


def score_vs(mpl, c: Collation, costs: list[AgentCost], what: str):
    fig, ax = _subplots(mpl, (4.5, 3.5))
    colors = agent_colors(c.agents)
    points = _points(c, costs, what)
    for agent, x, m, s in points:
        bars = ax.errorbar([x], [m], yerr=[s], fmt="o", capsize=3, label=agent, color=colors[agent])
        bars.lines[0].set_gid(GID + agent)
    if len(points) <= 10:
        _legend(ax, len(points))
    right = max(x for _, x, _, _ in points)
    ax.set_xlim(0, right * 1.15 if right > 0 else 1.0)  # from zero: time and money are never negative
    _score_axis(ax, [m + s for _, _, m, s in points])
    ax.set_xlabel("hours used per trial" if what == "time" else "cost per trial (USD)")
    ax.set_ylabel("weighted average")
    ax.spines[["top", "right"]].set_visible(False)
    return fig


FIGURES = ("benchmarks", "aggregate", "score_vs_time", "score_vs_cost")
TITLES = {
    "benchmarks": "score per benchmark",
    "aggregate": "weighted average",
    "score_vs_time": "score vs time used",
    "score_vs_cost": "score vs cost",
}


def empty_reason(figure: str, c: Collation, costs: list[AgentCost]) -> str | None:
    """Why `figure` has nothing to show (it is then not drawn), or None."""
    if figure == "benchmarks":
        return None if any(_has(s) for s in c.per_benchmark.values()) else "no agent has a score on any benchmark"
    if figure == "aggregate":
        scored = any(_has(c.aggregate.get(a)) for a in c.agents)
        return None if scored or c.baseline_aggregate else "no agent has a weighted average"
    what = figure.removeprefix("score_vs_")
    if _points(c, costs, what):
        return None
    return "no agent reported a cost" if what == "cost" else "no agent has a weighted average"


def not_drawn(c: Collation, costs: list[AgentCost]) -> list[str]:
    """One line per figure left out for want of data."""
    return [f"{TITLES[f]}: not drawn ({why})" for f in FIGURES if (why := empty_reason(f, c, costs)) is not None]


def draw(mpl, figure: str, c: Collation, costs: list[AgentCost], out: Path) -> list[Path]:
    """One of FIGURES, as PNG and PDF; nothing (and its old files removed) when it has no data."""
    if empty_reason(figure, c, costs) is not None:
        for ext in ("png", "pdf"):
            (out / f"{figure}.{ext}").unlink(missing_ok=True)  # a stale figure from an earlier collation
        return []
    return _save(make(mpl, figure, c, costs), out, figure)


def make(mpl, figure: str, c: Collation, costs: list[AgentCost]):
    """The matplotlib Figure of one of FIGURES (which must have data: empty_reason is None)."""
    if figure == "benchmarks":
        return benchmark_bars(mpl, c)
    if figure == "aggregate":
        return aggregate_bars(mpl, c)
    return score_vs(mpl, c, costs, figure.removeprefix("score_vs_"))


def write_plots(c: Collation, costs: list[AgentCost], out: Path, figures: tuple[str, ...] = FIGURES) -> list[Path]:
    """Every figure into `out`; [] when matplotlib is not installed (pip install 'ptbench[plots]')."""
    mpl = _matplotlib()
    if mpl is None:
        return []
    return [path for figure in figures for path in draw(mpl, figure, c, costs, out)]
