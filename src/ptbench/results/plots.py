"""A grouped bar chart of a results table: one group per task, one bar per agent, ± std over seeds."""

from __future__ import annotations

from pathlib import Path

from ptbench.results.collate import Table


def plot_table(table: Table, path: Path, scale: float = 100.0) -> Path | None:
    """Write the chart as PNG; None when matplotlib is not installed (pip install 'ptbench[plots]')."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display on cluster nodes
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    n_rows = max(1, len(table.rows))
    width = 0.8 / n_rows
    fig, ax = plt.subplots(figsize=(max(4.0, 1.2 * len(table.columns) * max(1, n_rows / 2)), 3.5))
    for i, row in enumerate(table.rows):
        cells = [table.cells.get((row, c)) for c in table.columns]
        means = [c.mean * scale if c and c.values else 0.0 for c in cells]
        stds = [c.std * scale if c and c.values else 0.0 for c in cells]
        xs = [j + (i - (n_rows - 1) / 2) * width for j in range(len(table.columns))]
        ax.bar(xs, means, width, yerr=stds, capsize=3, label=row)
    ax.set_xticks(range(len(table.columns)), table.columns)
    ax.set_ylabel("score (mean ± std over seeds)")
    ax.legend(fontsize="small", frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, dpi=150)
    plt.close(fig)
    tmp.replace(path)  # atomic, like every file another process may read
    return path
