"""`ptbench collate` draws its plots in forked child processes (results/plot_process.py) while it reads
records and writes tables: the same bytes as drawing them in the process, a figure that fails fails
the command, a child that dies is reported, and no child outlives the command."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from ptbench.results.collate import collate_dirs, gc_paused, write_outputs
from ptbench.results.plot_process import PlotProcess
from ptbench.results.plots import FIGURES
from tests.conftest import ptbench
from tests.results import synthetic

REPO = Path(__file__).resolve().parents[2]

pytest.importorskip("matplotlib")  # an extra (ptbench[plots]); installed by scripts/install.sh test


def _files(out):
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def test_plots_from_the_child_processes_equal_plots_drawn_in_process(tmp_path):
    cdir = synthetic.write(tmp_path / "results")
    run = ptbench("collate", str(cdir), "--out", str(tmp_path / "forked"), timeout=120)
    assert run.returncode == 0, run.stderr
    _, files = write_outputs(collate_dirs([cdir]), tmp_path / "here")  # no plotter: drawn in this process
    assert [f.name for f in files][-8:] == [f"{stem}.{ext}" for stem in FIGURES for ext in ("png", "pdf")]
    assert run.stdout.splitlines()[-1] == "tables: " + ", ".join(str(tmp_path / "forked" / f.name) for f in files)
    assert _files(tmp_path / "forked") == _files(tmp_path / "here")  # byte for byte, every table and figure


def test_a_figure_that_fails_fails_the_command(tmp_path):
    cdir = synthetic.write(tmp_path / "results")
    out = tmp_path / "tables"
    (out / "score_vs_cost.png").mkdir(parents=True)  # the figure's file cannot replace a folder
    run = ptbench("collate", str(cdir), "--out", str(out), timeout=120)
    assert run.returncode != 0
    said = "".join(run.stderr.split())  # the traceback box wraps lines anywhere
    assert "PlotError:drawingtheplotsfailed" in said and "IsADirectoryError" in said and "score_vs_cost.png" in said
    assert (out / "results.md").is_file() and (out / "benchmarks.png").is_file()  # the rest is written
    assert not list(out.glob(".*.tmp.*"))  # the failed figure left no temporary file


def _in_a_fresh_python(code: str, tmp_path) -> None:
    """Run `code` in a new interpreter: earlier tests may leave threads in pytest's process (torch's,
    a daemon server's), and a process with threads rightly never forks the plotter."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    run = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), str(tmp_path)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]


def test_a_dead_child_is_reported(tmp_path):
    _in_a_fresh_python(
        """
        import sys
        from pathlib import Path
        import pytest
        from ptbench.results.collate import collate_dirs, write_outputs
        from ptbench.results.plot_process import PlotError, PlotProcess
        from tests.results import synthetic
        tmp = Path(sys.argv[1])
        cdir = synthetic.write(tmp / "results")
        plotter = PlotProcess.start()
        assert plotter is not None, "a single-threaded process: the child must be forked"
        plotter._proc.kill()
        plotter._proc.join()
        with pytest.raises(PlotError, match="ended without drawing the plots .exit code -9"):
            write_outputs(collate_dirs([cdir]), tmp / "t", plotter=plotter)
        assert (tmp / "t" / "results.md").is_file() and not list((tmp / "t").glob("*.png"))
    """,
        tmp_path,
    )


def test_a_command_that_stops_early_kills_the_child_at_once(tmp_path):
    _in_a_fresh_python(
        """
        from ptbench.results.plot_process import PlotProcess
        plotter = PlotProcess.start()
        assert plotter is not None, "a single-threaded process: the child must be forked"
        proc = plotter._proc
        plotter.close()  # as write_tables does when the records are bad: no plots will be asked for
        assert not proc.is_alive() and proc.exitcode is not None
    """,
        tmp_path,
    )


def test_no_fork_from_a_threaded_process(tmp_path):
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert PlotProcess.start() is None  # a lock held by the other thread would stay held in the child
    finally:
        stop.set()
        thread.join()


def test_gc_pause_restores_the_collector_even_when_the_block_raises():
    assert gc.isenabled()
    with pytest.raises(RuntimeError), gc_paused():
        assert not gc.isenabled()
        raise RuntimeError("bad record")
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # a caller that had it off keeps it off
    finally:
        gc.enable()


def test_the_single_layout_pass_writes_the_bytes_of_fig_tight_layout(tmp_path, monkeypatch):
    """plots._save lays a figure out with TightLayoutEngine.execute (savefig then skips a second
    layout pass); the files must equal those of matplotlib's own fig.tight_layout()."""
    import matplotlib.layout_engine

    from ptbench.results import plots

    result = collate_dirs([synthetic.write(tmp_path / "results")])
    (tmp_path / "once").mkdir()
    (tmp_path / "twice").mkdir()
    plots.write_plots(result.collation, result.costs, tmp_path / "once")

    class TightLayoutCall:  # what _save did before: fig.tight_layout(), which leaves a placeholder engine
        def __init__(self, **_):
            pass

        def execute(self, fig):
            fig.tight_layout()
            assert fig.get_layout_engine() is not None  # so savefig lays it out again

    monkeypatch.setattr(matplotlib.layout_engine, "TightLayoutEngine", TightLayoutCall)
    plots.write_plots(result.collation, result.costs, tmp_path / "twice")
    assert _files(tmp_path / "once") == _files(tmp_path / "twice") and len(_files(tmp_path / "once")) == 8
