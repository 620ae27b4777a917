"""What `ptbench run` shows while its trials run: per running trial its stage (prepare, solve, collect,
integrity, evaluate, record), during solve the agent's own progress (a trainer's steps, an LLM agent's
model calls) and the budget left; a line per trial as it ends.

Everything shown is read from the files each trial's runner writes atomically (state.json) or appends
(agent/native.log, agent/calls.jsonl): the same reader `ptbench status` uses (`ptbench.status.activity`).
On a terminal, a table redrawn in place; otherwise (a pipe, a log file, CI) plain lines with no control
codes: one when a trial's stage changes, and one at most every `interval` seconds while its progress moves.
"""

from __future__ import annotations

import time

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from ptbench.core.errors import UserError
from ptbench.status import activity, hms, trial_status
from ptbench.trial import TrialDir

PLAIN_INTERVAL_S = 30.0  # without a terminal: the least time between two progress lines of a trial
REFRESH_S = 1.0  # the files are read at most this often


class RunDisplay:
    def __init__(self, console: Console, name: str, total: int, *, interval: float = PLAIN_INTERVAL_S) -> None:
        self.console, self.name, self.total, self.interval = console, name, total, interval
        self.finished = 0
        self.started = time.monotonic()
        self.rows: dict[str, tuple[str, str]] = {}  # trial id -> (stage, progress) now
        self.printed: dict[str, tuple[str, str, float]] = {}  # plain mode: the last line of each trial
        self.last_read = 0.0
        self.live: Live | None = None

    def __enter__(self) -> RunDisplay:
        if self.console.is_terminal:
            self.live = Live(self._view(), console=self.console, auto_refresh=False, transient=True)
            self.live.__enter__()
        else:
            self._plain(f"{self.name}: {self.total} trial(s) to run")
        return self

    def __exit__(self, *exc) -> None:
        if self.live is not None:
            self.live.__exit__(*exc)

    def tick(self, running: list[TrialDir]) -> None:
        """Re-read the running trials' files (at most every REFRESH_S) and show what changed."""
        now = time.monotonic()
        if now - self.last_read < REFRESH_S:
            return
        self.last_read = now
        rows = {}
        for trial in running:
            try:
                stage, progress = activity(trial, trial.load_state())
            except (UserError, OSError):  # a state.json being replaced or gone bad: shown on the next read
                stage, progress = self.rows.get(trial.id, ("", ""))
            rows[trial.id] = (stage or "", progress)
        self.rows = rows
        if self.live is not None:
            self.live.update(self._view(), refresh=True)
            return
        for tid, (stage, progress) in rows.items():
            if not stage:  # recorded: its own line comes from `done`
                continue
            last = self.printed.get(tid)
            moved = last is not None and progress != last[1] and now - last[2] >= self.interval
            if last is None or stage != last[0] or moved:
                self.printed[tid] = (stage, progress, now)
                self._plain(f"  {tid}: {stage}" + (f" ({progress})" if progress else ""))

    def done(self, trial: TrialDir, code: int) -> None:
        self.finished += 1
        self.rows.pop(trial.id, None)
        st = trial_status(trial)
        line = f"  {trial.id}: {st.state} {st.metric}".rstrip() + f"  [{self.finished}/{self.total}]"
        self._plain(line)
        if self.live is not None:
            self.live.update(self._view(), refresh=True)

    def _plain(self, line: str) -> None:
        # markup off: trial ids and an agent's numbers are text, never rich markup
        self.console.print(line, markup=False, highlight=False, soft_wrap=True)

    def _view(self):
        head = Text(f"{self.name}: {self.finished}/{self.total} done, {hms(time.monotonic() - self.started)} elapsed")
        if not self.rows:
            return head
        table = Table(box=None, pad_edge=False, show_header=True)
        for col in ("trial", "stage", "progress"):
            table.add_column(col, overflow="fold", no_wrap=col == "stage")
        for tid, (stage, progress) in sorted(self.rows.items()):
            table.add_row(Text(tid), Text(stage), Text(progress))
        return Group(head, table)
