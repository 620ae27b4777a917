"""The figures beside the tables: one colour per agent in every figure (read back from the PNGs'
metadata, which records what the artists were drawn in), tick labels that do not overlap however many
and however long, scores on 0..100 even when every score is zero, and no figure without data."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ptbench.results import plots
from ptbench.results.collate import collate_dirs, write_outputs
from tests.conftest import ptbench
from tests.results import synthetic
from tests.results.browser import drawn_colors

pytest.importorskip("matplotlib")  # an extra (ptbench[plots]); installed by scripts/install.sh test


def campaign(tmp_path: Path, trials: list[dict], baselines=synthetic.BASELINES) -> Path:
    return synthetic.write(tmp_path / "results", trials, baselines)


def test_every_figure_gives_an_agent_the_same_colour(tmp_path):
    # z has no cost and no second benchmark: the cost figure shows a subset of the agents, which
    # matplotlib's colour cycle (the old figures) coloured by position within each figure
    trials = [
        *synthetic.TRIALS,
        synthetic.record("w", "A", "gsm8k", 0, 0.3),
        synthetic.record("w", "A", "aime2025", 0, 0.1),
        synthetic.record("z", "A", "gsm8k", 0, 0.2, usage={"input_tokens": 5}),
        synthetic.record("z", "A", "aime2025", 0, 0.1, usage={"input_tokens": 5}),
    ]
    cdir = campaign(tmp_path, trials)
    result = collate_dirs([cdir])
    _, files = write_outputs(result, tmp_path / "tables")
    pngs = {f.stem: f for f in files if f.suffix == ".png"}
    assert set(pngs) == set(plots.FIGURES)
    expected = plots.agent_colors(["w", "x", "y", "z"])
    assert len(set(expected.values())) == 4
    seen: dict[str, set[str]] = {}
    for stem, png in pngs.items():
        colors = drawn_colors(png)
        assert colors, f"{stem}: no agent artist recorded"
        for agent, drawn in colors.items():
            seen.setdefault(agent, set()).update(drawn)
    assert "z" not in drawn_colors(pngs["score_vs_cost"])  # z reported no cost: not in that figure
    assert "z" in drawn_colors(pngs["aggregate"])
    assert {a: sorted(c) for a, c in seen.items()} == {a: [c] for a, c in expected.items()}


def test_the_palette_follows_the_sorted_labels_not_the_figure():
    assert plots.agent_colors(["b", "a"]) == plots.agent_colors(["a", "b"])
    assert plots.agent_colors(["a", "b", "c"])["c"] == plots.agent_colors(["c", "a", "b", "a"])["c"]
    many = plots.agent_colors([f"a{i:02d}" for i in range(25)])
    assert len(set(many.values())) == len(plots.PALETTE)  # beyond the palette colours repeat, none is lost


def _overlaps(fig) -> list[tuple[str, str]]:
    """Pairs of neighbouring x tick labels whose text overlaps. Horizontal and vertical labels: their
    boxes; a label at 45°: the distance between neighbours across the text against its own height."""
    renderer = fig.canvas.get_renderer()
    bad = []
    for ax in fig.axes:
        labels = [t for t in ax.get_xticklabels() if t.get_text()]
        for a, b in zip(labels, labels[1:], strict=False):
            angle = a.get_rotation() % 180
            ea, eb = a.get_window_extent(renderer), b.get_window_extent(renderer)
            if angle in (0, 90):
                if ea.x1 > eb.x0:
                    bad.append((a.get_text(), b.get_text()))
                continue
            a.set_rotation(0)
            height = a.get_window_extent(renderer).height
            a.set_rotation(angle)
            (xa, _), (xb, _) = a.get_position(), b.get_position()
            dx = abs(ax.transData.transform((xb, 0))[0] - ax.transData.transform((xa, 0))[0])
            if dx * math.sin(math.radians(angle)) < height:
                bad.append((a.get_text(), b.get_text()))
    return bad


@pytest.mark.parametrize(
    ("n_agents", "n_tasks", "label"),
    [
        (2, 2, "{}"),  # the demo: short labels, side by side
        (10, 7, "agent-with-a-long-name-{}"),  # rotated
        (30, 30, "claude-code-opus-with-reasoning-{}"),  # many and long: wrapped, abbreviated, vertical
    ],
)
def test_tick_labels_do_not_overlap(tmp_path, n_agents, n_tasks, label):
    agents = [label.format(i) for i in range(n_agents)]
    tasks = [f"task-{label.format(i)}" for i in range(n_tasks)]
    trials = [
        synthetic.record(a, "A", t, 0, 0.5, integrity={}) | {"task": {"name": t, "label": t}}
        for a in agents
        for t in tasks
    ]
    for r in trials:
        r["trial_id"] = f"{r['agent']['label']}__{r['task']['label']}"
    result = collate_dirs([campaign(tmp_path, trials, [])])
    mpl = plots._matplotlib()
    for figure in ("benchmarks", "aggregate"):
        fig = plots.make(mpl, figure, result.collation, result.costs)
        plots._save(fig, tmp_path, figure)  # laid out as the files are
        assert _overlaps(fig) == [], figure
        shown = [t.get_text() for t in fig.axes[0].get_xticklabels()]
        assert all(len(s.replace("\n", "")) <= plots.LINE_CHARS * plots.MAX_LINES for s in shown)
        assert all(s.count("\n") < plots.MAX_LINES for s in shown)
        assert len(set(shown)) == len(shown)  # shortened, they still tell the agents (tasks) apart
    if len(agents[0]) > plots.LINE_CHARS * plots.MAX_LINES:
        assert plots.is_abbreviated(agents[0]) and "…" in plots.tick_label(agents[0])
    else:
        assert not plots.is_abbreviated(agents[0]) and plots.tick_label(agents[0]).replace("\n", "") == agents[0]


def test_all_zero_scores_are_drawn_on_0_to_100(tmp_path):
    trials = [synthetic.record(a, "A", t, 0, 0.0) for a in ("x", "y") for t in ("gsm8k", "aime2025")]
    result = collate_dirs([campaign(tmp_path, trials)])
    mpl = plots._matplotlib()
    for figure in plots.FIGURES:
        assert plots.empty_reason(figure, result.collation, result.costs) is None  # zero is a score
        fig = plots.make(mpl, figure, result.collation, result.costs)
        assert fig.axes[0].get_ylim() == (0.0, 100.0), figure
        if figure.startswith("score_vs"):
            assert fig.axes[0].get_xlim()[0] == 0.0


def test_a_figure_without_data_is_not_drawn_and_its_old_files_go(tmp_path):
    no_cost = {"input_tokens": 10, "output_tokens": 1}
    trials = [synthetic.record("x", "A", t, 0, 0.5, usage=no_cost) for t in ("gsm8k", "aime2025")]
    out = tmp_path / "tables"
    out.mkdir()
    (out / "score_vs_cost.png").write_bytes(b"stale")  # from an earlier collation that had costs
    (out / "score_vs_cost.pdf").write_bytes(b"stale")
    result = collate_dirs([campaign(tmp_path, trials)])
    _, files = write_outputs(result, out)
    assert {f.name for f in files if f.suffix == ".png"} == {"benchmarks.png", "aggregate.png", "score_vs_time.png"}
    assert not (out / "score_vs_cost.png").exists() and not (out / "score_vs_cost.pdf").exists()
    assert plots.not_drawn(result.collation, result.costs) == ["score vs cost: not drawn (no agent reported a cost)"]
    run = ptbench("collate", str(tmp_path / "results" / "c1"), "--out", str(tmp_path / "cli"), timeout=300)
    assert run.returncode == 0, run.stderr
    assert "warning: score vs cost: not drawn (no agent reported a cost)" in run.stderr.splitlines()
    # control: with costs, the figure is drawn
    with_cost = collate_dirs([campaign(tmp_path / "b", synthetic.TRIALS)])
    assert plots.not_drawn(with_cost.collation, with_cost.costs) == []
