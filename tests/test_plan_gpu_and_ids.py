"""GPU checks, GPU slots on the local backend, and planning ids."""

from __future__ import annotations

import json

from ptbench.plan import expand, plan_campaign
from ptbench.spec import load_campaign
from tests.conftest import ptbench

GPU_CAMPAIGN = """
name: gpu
agents: [{name: quick-copy}]
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [{name: arithmetic, options: {n_test: 4}}]
seeds: [0, 1]
budget: {hours: 1, gpus: 1, gpu_type: H100}
results_dir: "@RESULTS@"
parallelism: 2
max_requeues: 1
"""


def test_node_without_gpu_is_a_retryable_failure_never_a_cpu_run(write_campaign, test_agents, tmp_path):
    path = write_campaign(GPU_CAMPAIGN)
    # Two GPU slots that do not exist: each trial gets its own, and the runner finds no usable GPU.
    run = ptbench("run", str(path), cwd=tmp_path, env={"CUDA_VISIBLE_DEVICES": "0,1", "PATH": "/usr/bin:/bin"})
    assert run.returncode == 1, run.stderr  # no trial has a result
    cdir = tmp_path / "results" / "gpu"
    devices = set()
    for trial in sorted(cdir.glob("quick-copy__*")):
        state = json.loads((trial / "state.json").read_text())
        assert state["failure"]["kind"] == "no_gpu" and state["failure"]["retryable"] is True
        assert "prepare" not in state["stages"]
        assert not (trial / "workspace").exists()  # the agent never ran
        assert not (trial / "result.json").exists()
        events = (trial / "events.jsonl").read_text().splitlines()
        started = [json.loads(line) for line in events if '"started"' in line]
        devices.add(started[0]["cuda_visible_devices"])
    assert devices == {"0", "1"}
    status = ptbench("status", str(path), cwd=tmp_path)
    assert "2 failed" in status.stdout and "no_gpu" in status.stdout

    # one more attempt is allowed (max_requeues: 1); after that the failure is final
    trial = cdir / "quick-copy__tiny__arithmetic__s0"
    assert ptbench("trial", "run", str(trial), env={"PATH": "/usr/bin:/bin"}).returncode == 75
    final = ptbench("trial", "run", str(trial), env={"PATH": "/usr/bin:/bin"})
    assert final.returncode == 0
    result = json.loads((trial / "result.json").read_text())
    assert result["status"] == "setup_failed"
    assert result["failure"]["kind"] == "no_gpu" and result["failure"]["stage"] == "prepare"


def test_trial_ids_are_stable_readable_and_replanning_is_idempotent(write_campaign, test_agents, tmp_path):
    path = write_campaign(GPU_CAMPAIGN.replace("local/tiny", "Org/Model.V2").replace(", label: tiny", ""))
    c = load_campaign(path)
    ids = [s.trial_id for s in expand(c)]
    assert ids == ["quick-copy__model.v2__arithmetic__s0", "quick-copy__model.v2__arithmetic__s1"]
    first = plan_campaign(c)
    assert sorted(first.created) == ids
    spec_bytes = (first.trials[0].trial_json).read_bytes()
    again = plan_campaign(c)
    assert again.created == [] and again.replaced == []
    assert first.trials[0].trial_json.read_bytes() == spec_bytes
