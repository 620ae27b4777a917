"""`ptbench status --watch`: a rich Live table refreshed until every trial is final, one line per state."""

from __future__ import annotations

import io

from rich.console import Console

from ptbench.cli import watch
from ptbench.status import TrialStatus
from tests.conftest import ptbench
from tests.results import synthetic


def test_watch_refreshes_until_every_trial_is_final(tmp_path, monkeypatch):
    buf = io.StringIO()
    monkeypatch.setattr(watch, "console", Console(file=buf, width=200, force_terminal=True))
    polls = [
        [TrialStatus("a", "running", "solve"), TrialStatus("b", "queued")],
        [TrialStatus("a", "running", "evaluate"), TrialStatus("b", "running", "solve")],
        [TrialStatus("a", "completed"), TrialStatus("b", "no_model")],
    ]
    calls = []

    def rows():
        calls.append(1)
        return polls[min(len(calls) - 1, 2)]

    assert watch.watch_status(tmp_path, rows, interval=0.01) == 0
    assert len(calls) == 3  # stops at the first poll where every trial is final
    out = buf.getvalue()
    assert "queued 1: b" in out and "running 2: a, b" in out and "completed 1: a" in out and "no_model 1: b" in out
    assert "every trial is final" in out


def test_state_lines_name_a_few_trials_and_count_the_rest():
    lines = watch.state_lines([TrialStatus(f"t{i}", "pending") for i in range(9)] + [TrialStatus("z", "completed")])
    assert lines == ["pending 9: t0, t1, t2, t3, t4, t5, … 3 more", "completed 1: z"]


def test_status_watch_command_returns_when_everything_is_final(tmp_path):
    cdir = synthetic.write(tmp_path / "results")
    for trial in cdir.iterdir():
        if trial.is_dir():
            (trial / "trial.json").write_text("{}")
    run = ptbench("status", str(cdir), "--watch", "--interval", "0.2", timeout=60)
    assert run.returncode == 0, run.stderr
    assert "every trial is final" in run.stdout and "completed" in run.stdout


def test_watch_stops_when_only_stuck_trials_remain(tmp_path, monkeypatch):
    buf = io.StringIO()
    monkeypatch.setattr(watch, "console", Console(file=buf, width=200, force_terminal=True))
    rows = [TrialStatus("a", "completed"), TrialStatus("b", "failed", detail="no_gpu (retryable)")]
    assert watch.watch_status(tmp_path, lambda: rows, interval=0.01) == 0
    assert "nothing left running; 1 need you" in buf.getvalue()
