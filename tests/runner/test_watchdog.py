"""The wall-clock budget is enforced on the real process tree (no mocks)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from ptbench.node.cgroup import TrialCgroup, own_cgroup
from tests.conftest import ptbench
from tests.support import require

pytestmark = pytest.mark.slow

CAMPAIGN = """
name: wd
agents: [{name: AGENT}]
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [{name: arithmetic, options: {n_test: 8}}]
seeds: [0]
budget: {hours: BUDGET, gpus: 0, grace_seconds: 2, warn_seconds: 5}
results_dir: "@RESULTS@"
evaluation: {engine: transformers}
integrity: {checks: [api_usage]}  # not what this file is about; memorization and model_identity load the models
sandbox: none   # the subreaper sweep of the unsandboxed tree (bwrap's PID namespace dies with it: tests/sandbox)
"""


def _marked_processes(trial_dir: Path) -> list[psutil.Process]:
    out = []
    for p in psutil.process_iter():
        try:
            if p.environ().get("PTBENCH_TRIAL_DIR") == str(trial_dir):
                out.append(p)
        except psutil.Error:
            pass
    return out


def _events(trial_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (trial_dir / "events.jsonl").read_text().splitlines()]


def _without_cgroup(argv: list[str]) -> list[str] | None:
    """argv run where the runner finds no cgroup v2 (a tmpfs over it in a private mount namespace,
    seen by nothing else), as on a v1-only node; None where this user cannot unshare mounts."""
    own, _ = own_cgroup()
    if own is None:
        return argv
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return None
    return [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        f"mount -t tmpfs none '{own}' && exec \"$@\"",
        "sh",
        *argv,
    ]


def test_deadline_kills_term_ignoring_agent_and_setsid_grandchild(write_campaign, test_agents, tmp_path):
    """Without a cgroup: the subreaper sweep alone, recorded as such (the cgroup path: test_sandbox_escapes)."""
    path = write_campaign(CAMPAIGN.replace("AGENT", "sleeper").replace("BUDGET", str(10 / 3600)))
    argv = _without_cgroup([sys.executable, "-m", "ptbench", "run", str(path)])
    require(argv is not None, "cannot hide the cgroup v2 hierarchy from the runner (needs root and unshare)")
    started = time.monotonic()
    run = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    elapsed = time.monotonic() - started
    assert run.returncode == 0, run.stderr
    trial = tmp_path / "results" / "wd" / "sleeper__tiny__arithmetic__s0"
    grandchild = int((trial / "workspace" / "grandchild.pid").read_text())
    assert not psutil.pid_exists(grandchild) or psutil.Process(grandchild).status() == psutil.STATUS_ZOMBIE
    assert _marked_processes(trial) == []
    result = json.loads((trial / "result.json").read_text())
    assert result["status"] == "timed_out"
    assert result["failure"]["kind"] == "timeout"
    # final_model/ was written before the deadline and is still evaluated
    assert result["primary_metric"]["n"] == 8
    kinds = [e["event"] for e in _events(trial)]
    assert kinds.index("warned") < kinds.index("deadline") < kinds.index("terminated")
    terminated = next(e for e in _events(trial) if e["event"] == "terminated")
    assert terminated["processes"] >= 2  # the agent shell, its sleeps and the setsid'd grandchild
    assert terminated["mechanism"] == "subreaper" and result["deadline_kill"] == "subreaper"
    containment = next(e for e in _events(trial) if e["event"] == "containment")
    assert containment["cgroup"] is None and containment["why"], containment
    state = json.loads((trial / "state.json").read_text())
    assert 9 <= state["solve_seconds_used"] <= 10.5
    print(f"whole run (plan, solve 10 s + grace 2 s, evaluate): {elapsed:.1f} s")


def test_kill_9_of_runner_then_resume_uses_remaining_budget(write_campaign, test_agents, tmp_path):
    """The agent also leaves a process that dropped the trial's marker (env -i), orphaned to init when
    the runner is killed -9: where the node has a writable cgroup v2 the requeued runner finds it in
    the trial's cgroup; the marker sweep alone cannot (the known gap without a cgroup, asserted too)."""
    probe, _ = TrialCgroup.create(str(tmp_path / "probe"))
    if probe is not None:
        probe.kill_and_remove()
    tag = os.urandom(4).hex()
    path = write_campaign(  # the tag quoted: an all-digit hex draw ("85828439") would be a YAML int
        CAMPAIGN.replace("{name: AGENT}", f"{{name: unmarked, options: {{tag: '{tag}'}}}}").replace(
            "BUDGET", str(60 / 3600)
        )
    )
    assert ptbench("plan", str(path), cwd=tmp_path).returncode == 0
    trial = tmp_path / "results" / "wd" / "unmarked__tiny__arithmetic__s0"

    def unmarked() -> list[psutil.Process]:
        return [p for p in psutil.process_iter(["cmdline"]) if (p.info["cmdline"] or [""])[0] == f"ptb-unmarked-{tag}"]

    try:
        runner = subprocess.Popen([sys.executable, "-m", "ptbench", "trial", "run", str(trial)], cwd=tmp_path)
        deadline = time.monotonic() + 60
        while not (trial / "workspace" / "starts.txt").exists() or not unmarked():
            assert time.monotonic() < deadline, "agent never started"
            time.sleep(0.2)
        time.sleep(3)
        os.kill(runner.pid, signal.SIGKILL)
        runner.wait()
        used_first = json.loads((trial / "state.json").read_text())["solve_seconds_used"]
        assert used_first >= 2
        assert _marked_processes(trial), "the orphaned agent should still be running after kill -9 of its runner"
        orphan = unmarked()[0]
        assert "PTBENCH_TRIAL_DIR" not in orphan.environ()

        again = ptbench("trial", "run", str(trial), cwd=tmp_path)
        assert again.returncode == 0, again.stderr
        state = json.loads((trial / "state.json").read_text())
        assert len(state["attempts"]) == 2
        assert state["solve_runs"] == 2
        # both attempts count: the first attempt's seconds plus a full 6 s agent run in the second
        assert state["solve_seconds_used"] >= used_first + 5.5
        assert len((trial / "workspace" / "starts.txt").read_text().splitlines()) == 2
        leftovers = next(e for e in _events(trial) if e["event"] == "killed_leftovers")
        assert _marked_processes(trial) == []
        if probe is not None:
            assert unmarked() == [], "the env -i process of the killed attempt survived the requeue"
            assert leftovers["by_cgroup"] >= 1 and leftovers["by_marker"] == 0, (
                leftovers
            )  # the agent itself may have ended meanwhile
            assert TrialCgroup.leftover(str(trial)) is None
        else:
            assert orphan.is_running() and leftovers["by_marker"] >= 1  # the gap a cgroup closes
        result = json.loads((trial / "result.json").read_text())
        assert result["status"] == "completed"
        assert result["deadline_kill"] == ("cgroup.kill" if probe is not None else "subreaper")
        assert result["budget"]["solve_seconds_used"] == pytest.approx(state["solve_seconds_used"], abs=0.01)
        # the second agent saw only what was left of the budget
        started = next(e for e in reversed(_events(trial)) if e["event"] == "agent_started")
        assert started["seconds_left"] <= 60 - used_first + 0.5
    finally:
        for p in unmarked():
            p.kill()


def test_timer_sh_reports_remaining_budget(write_campaign, test_agents, tmp_path):
    path = write_campaign(CAMPAIGN.replace("AGENT", "quick-copy").replace("BUDGET", "2"))
    assert ptbench("plan", str(path), cwd=tmp_path).returncode == 0
    from ptbench.runner.workspace import prepare_workspace, write_deadline
    from ptbench.trial import TrialDir

    trial = TrialDir(tmp_path / "results" / "wd" / "quick-copy__tiny__arithmetic__s0")
    prepare_workspace(trial, python=sys.executable)
    write_deadline(trial, 3600 + 125)
    out = subprocess.run(["bash", str(trial.workspace / "timer.sh")], capture_output=True, text=True)
    assert out.returncode == 0
    assert out.stdout.strip() in (
        "Remaining time (hours:minutes:seconds): 1:02:05",
        "Remaining time (hours:minutes:seconds): 1:02:04",
    )
