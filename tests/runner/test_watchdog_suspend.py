"""Time a job spends stopped (SIGSTOP/SIGCONT, as Slurm suspend or HTCondor suspend do) is not budget.

Real pieces: `ptbench trial run` with a fixture agent, the whole job (runner and agent, as a
scheduler's freezer stops it) stopped with SIGSTOP for 6 s mid-solve, then continued. The
detection threshold is lowered to 3 s (PTBENCH_SUSPEND_GAP_SECONDS) to keep the test short.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import psutil
import pytest

from ptbench.trial import TrialDir
from tests.conftest import ptbench

CAMPAIGN = """
name: susp
agents: [{name: slow-copy, options: {seconds: 5}}]
base_models: [{id: local/empty, path: "EMPTY", label: empty}]  # an empty final_model/: no evaluation to wait for
tasks: [{name: arithmetic, options: {n_test: 4}}]
budget: {hours: 1, gpus: 0, grace_seconds: 2}
results_dir: "@RESULTS@"
"""
STOP_SECONDS = 6  # twice the lowered detection threshold: a stop, not a slow tick of a loaded machine


def _events(trial: TrialDir) -> list[dict]:
    try:
        return [json.loads(line) for line in trial.events_jsonl.read_text().splitlines()]
    except FileNotFoundError:
        return []


@pytest.mark.slow
def test_suspended_time_is_not_charged(write_campaign, test_agents, tmp_path) -> None:
    (tmp_path / "empty-model").mkdir()
    path = write_campaign(CAMPAIGN.replace("EMPTY", str(tmp_path / "empty-model")))
    planned = ptbench("plan", str(path), cwd=tmp_path)
    assert planned.returncode == 0, planned.stderr
    trial = TrialDir(next((tmp_path / "results" / "susp").glob("*/trial.json")).parent)
    env = {**os.environ, "PTBENCH_SUSPEND_GAP_SECONDS": "3"}
    job = subprocess.Popen(
        [sys.executable, "-m", "ptbench", "trial", "run", str(trial.path)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not any(e["event"] == "agent_started" for e in _events(trial)):
            assert job.poll() is None and time.monotonic() < deadline, job.communicate()
            time.sleep(0.1)
        time.sleep(1)
        root = psutil.Process(job.pid)
        tree = [root, *root.children(recursive=True)]
        for p in tree:  # the whole job, as the scheduler's freezer stops it
            p.suspend()
        stopped_at = time.monotonic()
        time.sleep(STOP_SECONDS)
        stopped = time.monotonic() - stopped_at
        for p in tree:
            p.resume()
        out, err = job.communicate(timeout=300)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, 9)
            job.wait(10)
    assert job.returncode == 0, err[-2000:]
    events = _events(trial)
    suspended = [e for e in events if e["event"] == "suspended"]
    assert len(suspended) == 1 and suspended[0]["seconds"] >= stopped - 2, suspended
    started = next(e["time"] for e in events if e["event"] == "agent_started")
    exited = next(e["time"] for e in events if e["event"] == "agent_exited")
    used = trial.load_state().solve_seconds_used
    assert used <= (exited - started) - (stopped - 2), (used, exited - started, stopped)  # the stop is not in it
    assert trial.read_result()["status"] == "no_model"
