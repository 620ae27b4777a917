"""`ptbench run`'s progress, logs and exit code (issue 31, findings 5 and 7): the stage and the agent's own
progress of each running trial, plain lines without a terminal; logs that hold what the runner printed and
a `status` that points only at one; exit 1 when a trial ended without a scored result (a real cancelled
campaign), 0 when every trial scored (the demo and local-campaign tests are those controls)."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest
from rich.console import Console

from ptbench import commands
from ptbench.cli.run_progress import RunDisplay
from ptbench.status import LOG_TAIL_BYTES, activity, agent_progress
from ptbench.trial import Attempt, StageMark, TrialDir, TrialState
from tests.conftest import ptbench
from tests.servers import running, wait_gone

CAMPAIGN = """
name: prog
agents: [{name: base-model}]
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [{name: arithmetic, options: {n_test: 4}}]
seeds: [0]
budget: {hours: 1, gpus: 0}
results_dir: "@RESULTS@"
"""


@pytest.fixture
def planned(tmp_path: Path) -> TrialDir:
    (tmp_path / "model").mkdir()
    path = tmp_path / "c.yaml"
    path.write_text(CAMPAIGN.replace("@MODEL@", str(tmp_path / "model")).replace("@RESULTS@", str(tmp_path / "r")))
    (trial,) = commands.plan(str(path)).trials
    return trial


def _bar(n: int, total: int, desc: str = "") -> str:
    return f"\r{desc + ': ' if desc else ''}{100 * n // total:3d}%|██        | {n}/{total} [00:01<00:09, 9.9it/s]"


def test_agent_progress_is_the_trainer_bar_not_a_data_bar_nor_junk(planned: TrialDir) -> None:
    planned.agent_dir.mkdir()
    log = planned.agent_dir / "native.log"
    assert agent_progress(planned) == ""  # nothing reported yet: nothing shown
    log.write_text(_bar(5000, 9600, "Tokenizing train dataset") + "\n")
    assert agent_progress(planned) == ""  # data preparation is not training steps
    log.write_text(log.read_text() + _bar(1, 3000) + _bar(2, 3000) + "\n{'loss': '0.5'}\n" + _bar(300, 3000))
    assert agent_progress(planned) == "step 300/3000"
    # The agent writes what it likes: markup and control codes after the bar are not shown; only the
    # last bar's two numbers are.
    with open(log, "a") as fh:
        fh.write(_bar(400, 3000) + "[red]x[/] " * 500 + "\x1b[2J" + "\n")
    assert agent_progress(planned) == "step 400/3000"
    # A bar with absurd numbers (int() refuses 5,000 digits) is not a bar: skipped, nothing raised.
    with open(log, "a") as fh:
        fh.write(f"\r 10%|█  | {'9' * 5000}/{'9' * 5000} [00:01<00:09, 9.9it/s]")
    assert agent_progress(planned) == "step 400/3000"
    # Only the log's tail is read (a watcher reads it every second): a flood pushes the bar out of view.
    with open(log, "a") as fh:
        fh.write("x" * LOG_TAIL_BYTES)
    assert agent_progress(planned) == ""


def test_agent_progress_counts_the_gateway_calls_as_they_are_appended(planned: TrialDir) -> None:
    planned.agent_dir.mkdir()
    calls = planned.agent_dir / "calls.jsonl"
    calls.write_text('{"model": "m"}\n' * 3)
    assert agent_progress(planned) == "3 model calls"
    with open(calls, "a") as fh:
        fh.write('{"model": "m"}\n' * 2)
    assert agent_progress(planned) == "5 model calls"
    calls.write_text('{"model": "m"}\n')  # a new file (another attempt): counted anew
    assert agent_progress(planned) == "1 model call"


def test_agent_progress_never_blocks_on_a_fifo_nor_follows_a_link(planned: TrialDir, tmp_path: Path) -> None:
    """Under sandbox: none the agent can reach agent/: a FIFO in place of its log would block a plain
    open() and hang `ptbench run`'s loop; a link would have the reader show another file's numbers."""
    import os
    import threading

    planned.agent_dir.mkdir()
    os.mkfifo(planned.agent_dir / "native.log")
    os.mkfifo(planned.agent_dir / "calls.jsonl")
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(agent_progress(planned)), daemon=True)
    reader.start()
    reader.join(60)  # a hang guard, not a timing: a blocked open never returns
    assert got == [""]
    for name in ("native.log", "calls.jsonl"):
        (planned.agent_dir / name).unlink()
    elsewhere = tmp_path / "elsewhere.log"
    elsewhere.write_text(_bar(7, 9))
    (planned.agent_dir / "native.log").symlink_to(elsewhere)
    assert agent_progress(planned) == ""


def _solving(trial: TrialDir, used: float) -> None:
    state = TrialState(
        stages={"prepare": StageMark(done_at=time.time())},
        solve_seconds_used=used,
        attempts=[Attempt(number=1, started_at=time.time(), host="h", pid=1)],
    )
    trial.save_state(state)


def test_plain_display_shows_stage_steps_and_time_left_without_control_codes(planned: TrialDir) -> None:
    _solving(planned, used=600)
    planned.agent_dir.mkdir()
    (planned.agent_dir / "native.log").write_text(_bar(42, 3000))
    assert activity(planned, planned.load_state()) == ("solve", "step 42/3000, 0:50:00 left")
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=80)
    with RunDisplay(console, "prog", 1, interval=3600) as display:
        display.tick([planned])
        (planned.agent_dir / "native.log").write_text(_bar(43, 3000))
        display.last_read = 0  # read again now (not a wall-clock wait)
        display.tick([planned])  # progress moved, but within `interval`: no second line
        state = planned.load_state()
        state.stages.update(solve=StageMark(done_at=time.time()), collect=StageMark(done_at=time.time()))
        planned.save_state(state)
        display.last_read = 0
        display.tick([planned])  # a new stage: a line at once
    text = out.getvalue()
    assert "\x1b" not in text and "\r" not in text
    assert text.splitlines() == [
        "prog: 1 trial(s) to run",
        f"  {planned.id}: solve (step 42/3000, 0:50:00 left)",
        f"  {planned.id}: integrity",
    ]


def test_status_points_only_at_a_log_with_text(planned: TrialDir) -> None:
    state = TrialState(attempts=[Attempt(number=1, started_at=time.time(), host="h", pid=1, ended_at=time.time())])
    state.failure = {"stage": "prepare", "kind": "no_gpu", "message": "none", "retryable": True}
    planned.save_state(state)
    from ptbench.backends.local import LocalBackend

    cdir = planned.path.parent
    (row,) = commands.status_rows(cdir, backend=LocalBackend())
    assert row.state == "failed" and row.log is None  # no log at all
    log = cdir / "logs" / f"{planned.id}.log"
    log.parent.mkdir()
    log.write_text("")
    (row,) = commands.status_rows(cdir, backend=LocalBackend())
    assert row.log is None  # an empty one is not pointed at either
    log.write_text("12:00:00 prog: prepare failed (no_gpu)\n")
    (row,) = commands.status_rows(cdir, backend=LocalBackend())
    assert row.log == str(log)


SLOW_CAMPAIGN = """
name: cancelme
agents: [{name: slow-copy, options: {seconds: 600}}]
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [{name: arithmetic, options: {n_test: 4}}]
seeds: [0]
budget: {hours: 1, gpus: 0, grace_seconds: 2}
results_dir: "@RESULTS@"
sandbox: none
parallelism: 1
"""


@pytest.mark.slow
def test_run_exits_1_when_its_trial_was_cancelled(write_campaign, test_agents, tmp_path: Path) -> None:
    path = write_campaign(SLOW_CAMPAIGN)
    cdir, out = tmp_path / "results" / "cancelme", tmp_path / "run.log"
    trial = cdir / "slow-copy__tiny__arithmetic__s0"
    with running(["run", str(path)], out) as proc:
        deadline = time.monotonic() + 120
        while not (trial / "workspace" / "starts.txt").exists():
            assert proc.poll() is None and time.monotonic() < deadline, out.read_text()[-2000:]
            time.sleep(0.2)
        # `status` from another shell shows the same: the stage and the budget left of the running trial.
        status = ptbench("status", str(path), cwd=tmp_path, env={"COLUMNS": "250"})
        row = next(line for line in status.stdout.splitlines() if trial.name in line)
        assert "running" in row and "solve" in row and " left" in row, status.stdout
        cancel = ptbench("cancel", str(path), cwd=tmp_path)
        assert cancel.returncode == 0 and "cancelled 1 trial" in cancel.stdout, cancel.stdout + cancel.stderr
        assert wait_gone(proc, out, "cancel") == 1, out.read_text()[-3000:]
    assert json.loads((trial / "result.json").read_text())["status"] == "cancelled"
    text = out.read_text()
    assert f"{trial.name}: solve (" in text and f"{trial.name}: cancelled" in text
    log = (cdir / "logs" / f"{trial.name}.log").read_text()
    assert "prepare ok" in log and "recorded cancelled" in log  # the log holds what the runner printed
    # Run again: nothing left to run, and the campaign still has a trial without a score.
    again = ptbench("run", str(path), cwd=tmp_path)
    assert again.returncode == 1 and "nothing to run" in again.stdout, again.stdout + again.stderr
