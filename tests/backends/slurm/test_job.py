"""The Slurm job wrapper (`TrialJob`, what each array task runs), without a cluster: Slurm's part —
signalling every process of the job step — is done here with os.kill, at the moment that matters."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

from tests.conftest import ptbench

CAMPAIGN = """
name: job
agents: [{name: slow-copy, options: {seconds: 300}}]
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [{name: arithmetic, options: {n_test: 6}}]
seeds: [0]
budget: {hours: 1, gpus: 0, grace_seconds: 2}
results_dir: "@RESULTS@"
evaluation: {engine: transformers}
sandbox: none
"""

WRAPPER = (
    "import sys; from ptbench.backends.slurm.job import TrialJob; sys.exit(TrialJob(600, 30, sys.argv[1])(sys.argv[2]))"
)


def test_the_limit_signal_during_the_runners_start_up_is_held_until_it_can_record(
    write_campaign, test_agents, tmp_path: Path
) -> None:
    """Slurm sends `--signal` up to a minute early, so on a short job it can come while the runner is
    still starting (CI saw it: the runner died of SIGUSR2's default action, the job FAILED, and nothing
    was recorded). A runner that takes 4 s to start stands in for a slow start on a loaded node."""
    assert ptbench("plan", str(write_campaign(CAMPAIGN)), cwd=tmp_path).returncode == 0
    trial = tmp_path / "results" / "job" / "slow-copy__tiny__arithmetic__s0"
    slow_python = tmp_path / "slow-python"
    slow_python.write_text(
        f"#!{sys.executable}\nimport os, sys, time\ntime.sleep(4)\n"
        "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])\n"
    )
    slow_python.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SUBMITIT_"))}
    job = subprocess.Popen(
        [sys.executable, "-c", WRAPPER, str(slow_python), str(trial)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (children := psutil.Process(job.pid).children()):
            assert job.poll() is None and time.monotonic() < deadline, "the wrapper never started the runner"
            time.sleep(0.05)
        assert not (trial / "events.jsonl").exists() or "started" not in (trial / "events.jsonl").read_text()
        for pid in (job.pid, children[0].pid):  # Slurm signals every process of the step
            os.kill(pid, signal.SIGUSR2)
        out, _ = job.communicate(timeout=120)
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()
    assert job.returncode == 0, out
    assert "job got SIGUSR2" in out
    result = json.loads((trial / "result.json").read_text())
    assert result["failure"]["kind"] == "scheduler_time_limit", result["failure"]
    assert result["status"] == "timed_out"
    events = [json.loads(line)["event"] for line in (trial / "events.jsonl").read_text().splitlines()]
    assert "agent_started" not in events  # stopped at the first safe point, before the agent ran
