"""A trial whose lock a dead node's runner still holds: the runner exits 75 (retry), and a requeue completes.

Real pieces: `ptbench trial run`, the trial's flock held by another process (what a lock on a shared
filesystem looks like until the file server releases a dead client's lock) with that runner's
lease long expired, then released as the server would.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

from ptbench.trial import TrialDir
from tests.conftest import ptbench

CAMPAIGN = """
name: lease
agents: [{name: quick-copy}]
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [{name: arithmetic, options: {n_test: 4}}]
budget: {hours: 1, gpus: 0, grace_seconds: 2}
results_dir: "@RESULTS@"
evaluation: {engine: transformers}
"""

HOLD = (
    "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT); "
    "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(600)"
)


def _planned_trial_with_held_lock(write_campaign, tmp_path) -> tuple[TrialDir, subprocess.Popen]:
    """A planned trial whose lock another process holds (as a runner on a dead node would)."""
    path = write_campaign(CAMPAIGN)
    assert ptbench("plan", str(path), cwd=tmp_path).returncode == 0
    trial = TrialDir(next((tmp_path / "results" / "lease").glob("*/trial.json")).parent)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(trial.path / ".lock")], stdout=subprocess.PIPE, text=True
    )
    if holder.stdout.readline().strip() != "held":
        holder.kill()
        holder.wait(10)
        raise AssertionError("the lock holder did not take the lock")
    return trial, holder


def test_lock_of_a_dead_runner_exits_75_and_a_requeue_completes(write_campaign, test_agents, tmp_path) -> None:
    trial, holder = _planned_trial_with_held_lock(write_campaign, tmp_path)
    try:
        (trial.path / "runner.lease").write_text(
            json.dumps({"pid": 4242, "host": "node-that-died", "renewed_at": time.time() - 900, "ttl": 120})
        )
        busy = ptbench("trial", "run", str(trial.path), cwd=tmp_path)
        assert busy.returncode == 75, busy.stderr
        assert "node-that-died" in busy.stderr and "expire" in busy.stderr
        assert trial.read_result() is None and not (trial.workspace / "final_model").exists()  # nothing was touched
    finally:
        holder.kill()  # the file server drops the dead client's lock
        holder.wait(10)
    again = ptbench("trial", "run", str(trial.path), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert trial.read_result()["status"] == "completed"
    assert not (trial.path / "runner.lease").exists()  # released with the lock


def test_a_live_runner_lease_says_so(write_campaign, test_agents, tmp_path) -> None:
    trial, holder = _planned_trial_with_held_lock(write_campaign, tmp_path)
    try:
        (trial.path / "runner.lease").write_text(
            json.dumps({"pid": holder.pid, "host": socket.gethostname(), "renewed_at": time.time(), "ttl": 120})
        )
        busy = ptbench("trial", "run", str(trial.path), cwd=tmp_path)
        assert busy.returncode == 75 and "is working on this trial" in busy.stderr, busy.stderr
    finally:
        holder.kill()
        holder.wait(10)


def test_lease_is_renewed_until_released(tmp_path) -> None:
    from ptbench.runner.lease import Lease

    class _T:
        path = tmp_path

    lease = Lease(_T(), ttl=1.0)  # type: ignore[arg-type]
    first = json.loads((tmp_path / "runner.lease").read_text())["renewed_at"]
    deadline = time.monotonic() + 10
    while json.loads((tmp_path / "runner.lease").read_text())["renewed_at"] == first and time.monotonic() < deadline:
        time.sleep(0.1)
    assert json.loads((tmp_path / "runner.lease").read_text())["renewed_at"] > first
    lease.release()
    assert not (tmp_path / "runner.lease").exists()
