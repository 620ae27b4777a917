"""The plots of `ptbench collate`, drawn in child processes while the parent reads records and writes tables.

matplotlib's import (about 0.6 s of CPU) and the eight plot files (about a second more on 10,000
records) were most of a collation. `PlotProcess.start()` forks a child before the records are read;
it imports matplotlib while the parent reads them. `send` hands it what the figures show; the child
forks once more and the two draw a share of the figures each (the second core) while the parent
writes the tables. `wait` returns the files in the order `write_plots` gives them, or raises
PlotError when a figure failed or a child died: the command fails as it would drawing them itself.
Every file is written atomically (plots._save).

Forking is safe only from a single-threaded process (a lock another thread holds would stay held in
the child): `start` returns None elsewhere, and the caller draws the plots itself.
"""

from __future__ import annotations

import dataclasses
import gc
import io
import multiprocessing
import signal
import threading
import traceback
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path

from ptbench.results import plots
from ptbench.results.aggregate import Collation
from ptbench.results.cost import AgentCost

# The largest figure (bars for every agent on every benchmark) and the aggregate bars in one process,
# the two scatter plots in the other: about even on a campaign of 10 agents x 7 benchmarks (0.49 and
# 0.36 s of CPU; the big figure alone against the other three was 0.33 and 0.52). A prefix of FIGURES,
# so the files keep their order.
FIRST_SHARE = plots.FIGURES[:2]


class PlotError(RuntimeError):
    """A figure could not be drawn; the message holds the child's traceback."""


def _send(conn: Connection, message: tuple) -> None:
    try:
        conn.send(message)
    except OSError:  # the parent is gone (interrupted): nobody to tell
        pass


def _warm_up() -> None:
    """Import matplotlib and load what the figures' first PNG and PDF need (the PDF backend, PIL's PNG
    writer, the font at the sizes the figures use, the artists' modules), drawing a tiny figure made
    of the same parts: done once here, on the idle core while the parent reads the records, instead of
    in each drawing process on the critical path."""
    mpl = plots._matplotlib()
    if mpl is None:
        return
    fig, ax = plots._subplots(mpl, (2.0, 1.5))
    ax.bar([0, 1], [1, 2], 0.4, yerr=[0.1, 0.2], capsize=3, label="a")
    ax.errorbar([0.5], [1], yerr=[0.1], fmt="o", capsize=3, label="b")
    ax.axhline(1, color="gray", linestyle="--", linewidth=1, label="c")
    ax.set_xticks([0, 1], ["a", "b"], rotation=20)
    ax.set_ylabel("warm-up")
    ax.text(0.5, 0.5, "warm-up", ha="center", va="center", transform=ax.transAxes)
    ax.legend(fontsize="small", frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.spines[["top", "right"]].set_visible(False)
    for ext in ("png", "pdf"):
        fig.savefig(io.BytesIO(), format=ext, dpi=150)


PlotJob = tuple[Collation, list[AgentCost], Path]  # write_plots' arguments but the figures


def _result(figures: tuple[str, ...], job: PlotJob) -> tuple[str, object]:
    try:
        c, costs, out = job
        return ("ok", plots.write_plots(c, costs, out, figures=figures))
    except BaseException:  # noqa: BLE001 - every failure goes back to the parent, which raises it
        return ("error", traceback.format_exc())


def _draw_share(figures: tuple[str, ...], job: PlotJob, conn: Connection) -> None:
    _send(conn, _result(figures, job))


def _serve(conn: Connection) -> None:
    """The child: import matplotlib, wait for the job, draw it in two processes, send the result."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it reaps or kills us
    _warm_up()  # while the parent reads the records
    # what is loaded now lives until the end: the collector's full passes need not walk it (nor touch
    # its pages, shared with the helper forked below)
    gc.freeze()
    try:
        job = conn.recv()
    except EOFError:
        return  # the parent stopped before the plots (bad input, no records): nothing to draw
    ctx = multiprocessing.get_context("fork")  # forked after the import: the helper shares it
    theirs, their_end = ctx.Pipe(duplex=False)
    helper = ctx.Process(target=_draw_share, args=(FIRST_SHARE, job, their_end), name="ptbench-plots-2")
    helper.start()
    their_end.close()
    mine = _result(tuple(f for f in plots.FIGURES if f not in FIRST_SHARE), job)
    try:
        first = theirs.recv()
    except EOFError:
        first = ("error", "the second plot process died without a word")
    helper.join()
    if first[0] != "ok" or mine[0] != "ok":
        _send(conn, ("error", "\n".join(str(text) for status, text in (first, mine) if status != "ok")))
    else:
        _send(conn, ("ok", first[1] + mine[1]))


class PlotProcess:
    def __init__(self, proc: BaseProcess, conn: Connection):
        self._proc, self._conn, self._sent = proc, conn, False

    @classmethod
    def start(cls) -> PlotProcess | None:
        """Fork the child now (before the records are read), or None where forking is not safe."""
        if threading.active_count() > 1 or "fork" not in multiprocessing.get_all_start_methods():
            return None
        ctx = multiprocessing.get_context("fork")
        conn, child_end = ctx.Pipe()
        proc = ctx.Process(target=_serve, args=(child_end,), name="ptbench-plots")
        proc.start()
        child_end.close()
        return cls(proc, conn)

    def send(self, c: Collation, costs: list[AgentCost], out: Path) -> None:
        # what the figures show, without the 10,000 trials and their records (a tenth of a second to pickle)
        slim = dataclasses.replace(c, trials=[], per_base={}, baseline_per_model={})
        try:
            self._conn.send((slim, costs, out))
        except OSError:  # the child is gone: `wait` says how it ended
            return
        self._sent = True

    def wait(self) -> list[Path]:
        """The plot files; PlotError when one could not be drawn."""
        try:
            status, payload = self._conn.recv()
        except EOFError:
            self._proc.join(10)
            raise PlotError(
                f"the plot process ended without drawing the plots (exit code {self._proc.exitcode})"
            ) from None
        finally:
            self.close()
        if status != "ok":
            raise PlotError(f"drawing the plots failed (the tables are written):\n{payload}")
        return payload

    def close(self) -> None:
        """Reap the child. Before `send` it is only importing matplotlib: killed. After, it finishes the
        figures it has begun (each file atomic) and its helper with it, so no process outlives the command."""
        self._conn.close()
        if not self._sent:
            self._proc.kill()
        self._proc.join(120)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join()
