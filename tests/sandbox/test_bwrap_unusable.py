"""A campaign that asks for `sandbox: bwrap` on a node where bubblewrap cannot create namespaces
fails the trial as a retryable setup failure (exit 75, then `setup_failed`); the agent never runs.

Seam: such a node is simulated by a `bwrap` first on PATH that fails exactly as the real one does
there (its message, exit status 1); the runner, the CLI and the trial directory are real."""

from __future__ import annotations

import json
from pathlib import Path

from ptbench.sandbox.bwrap import bwrap_problem
from tests.conftest import ptbench

CAMPAIGN = """
name: sb
agents: [{name: quick-copy}]
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [{name: arithmetic, options: {n_test: 4}}]
seeds: [0]
budget: {hours: 1, gpus: 0}
sandbox: bwrap
results_dir: "@RESULTS@"
max_requeues: 1
"""

NO_USERNS = (
    "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, likely because the kernel does not "
    "allow non-privileged user namespaces.' >&2\nexit 1\n"
)


def _forbidding_bwrap(tmp_path: Path) -> str:
    fake = tmp_path / "fakebin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text(NO_USERNS)
    fake.chmod(0o755)
    return f"{fake.parent}:/usr/bin:/bin"


def test_bwrap_that_cannot_create_namespaces_is_a_setup_failure(write_campaign, test_agents, tmp_path, monkeypatch):
    path = write_campaign(CAMPAIGN)
    assert ptbench("plan", str(path), cwd=tmp_path).returncode == 0
    trial = tmp_path / "results" / "sb" / "quick-copy__tiny__arithmetic__s0"
    env = {"PATH": _forbidding_bwrap(tmp_path)}
    monkeypatch.setenv("PATH", env["PATH"])
    assert "cannot create namespaces" in (bwrap_problem() or "")

    for _ in range(2):  # the first attempt and the one requeue allowed
        run = ptbench("trial", "run", str(trial), env=env)
        assert run.returncode == 75, run.stderr
        state = json.loads((trial / "state.json").read_text())
        assert state["failure"]["kind"] == "sandbox_unavailable" and state["failure"]["retryable"] is True
        assert "No permissions to creating new namespace" in state["failure"]["message"]
        assert "solve" not in state["stages"] and not (trial / "agent" / "native.log").exists()  # never ran unsandboxed
        assert not (trial / "result.json").exists()
    final = ptbench("trial", "run", str(trial), env=env)
    assert final.returncode == 0, final.stderr
    result = json.loads((trial / "result.json").read_text())
    assert result["status"] == "setup_failed"
    assert result["failure"]["kind"] == "sandbox_unavailable" and result["failure"]["stage"] == "prepare"


def test_missing_bwrap_is_named(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert "not on this node's PATH" in (bwrap_problem() or "")


def test_a_requeued_job_on_a_node_without_bwrap_does_not_solve_unsandboxed(write_campaign, test_agents, tmp_path):
    """Prepared on a good node (its stage marker is in state.json), resumed on a bad one: the solve
    stage checks again and stops before the agent starts."""
    import time

    from ptbench.trial import StageMark, TrialDir

    path = write_campaign(CAMPAIGN)
    assert ptbench("plan", str(path), cwd=tmp_path).returncode == 0
    trial = TrialDir(tmp_path / "results" / "sb" / "quick-copy__tiny__arithmetic__s0")
    state = trial.load_state()
    state.stages["prepare"] = StageMark(done_at=time.time(), outcome="ok")  # as the first node left it
    trial.save_state(state)
    run = ptbench("trial", "run", str(trial.path), env={"PATH": _forbidding_bwrap(tmp_path)})
    assert run.returncode == 75, run.stderr
    state = json.loads(trial.state_json.read_text())
    assert state["failure"]["kind"] == "sandbox_unavailable" and state["failure"]["stage"] == "prepare"
    assert "solve" not in state["stages"] and not (trial.path / "agent" / "native.log").exists()
