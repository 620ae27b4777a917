"""The trial monitor: samples of the runner's process tree during solve and evaluate, in a real local
trial (real runner, real agent process, real evaluation), and the summary in result.json.
No GPU here, so the samples carry CPU/RAM/disk only; the `gpu` test checks NVML sampling on a GPU.
"""

from __future__ import annotations

import json

import pytest

from ptbench.core.files import read_jsonl
from ptbench.node.monitor import Monitor, summarize
from tests.conftest import ptbench

CAMPAIGN = """
name: mon
agents: [{name: busy-copy, options: {seconds: 3}}]
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [{name: arithmetic, options: {n_test: 4}}]
budget: {hours: 1, gpus: 0, monitor_seconds: 0.5}
evaluation: {engine: transformers}
results_dir: "@RESULTS@"
"""


def test_a_real_trial_writes_samples_and_its_result_carries_the_summary(write_campaign, test_agents, tmp_path):
    path = write_campaign(CAMPAIGN)
    run = ptbench("run", str(path), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    trial = tmp_path / "results" / "mon" / "busy-copy__tiny__arithmetic__s0"
    result = json.loads((trial / "result.json").read_text())
    assert result["status"] == "completed", result
    samples = read_jsonl(trial / "monitor.jsonl")
    stages = {s["stage"] for s in samples}
    assert stages == {"solve", "evaluate"}  # nothing sampled in prepare, collect, integrity, record
    solve = [s for s in samples if s["stage"] == "solve"]
    assert len(solve) >= 4  # 3 s of work at 0.5 s
    # the agent's python (a grandchild of the runner) is in the tree: its 300 MB and its busy CPU
    assert max(s["rss_bytes"] for s in solve) > 300 * 2**20
    # (the busy loop's share of 2 shared cores varies: it is counted, not how fast it ran)
    assert max(s["cpu_percent"] or 0 for s in solve) > 10
    assert all("gpus" not in s for s in samples)
    summary = result["monitor"]
    assert summary["samples"] == len(samples)
    assert summary["rss_peak_bytes"] > 300 * 2**20 and summary["cpu_percent_max"] > 10
    assert summary["monitored_seconds"] >= 3
    assert summary["gpu_hours"] is None and summary["gpu_util_mean"] is None
    assert summary["trial_dir_peak_bytes"] > 0


def test_a_resumed_trial_keeps_earlier_samples_and_bad_lines_do_not_break_the_summary(tmp_path):
    m = Monitor(tmp_path, interval=0.05)
    with m.stage("solve"):
        pass
    with m.stage("prepare"):  # not monitored
        pass
    with m.stage("evaluate"):
        pass
    with open(tmp_path / "monitor.jsonl", "a") as f:
        f.write('{"time": 1, "stage": "solve", "error": "boom"}\n{"torn": ')  # an error line, a torn last line
    lines = read_jsonl(tmp_path / "monitor.jsonl")
    assert [s["stage"] for s in lines if "error" not in s] == ["solve", "solve", "evaluate", "evaluate"]
    assert summarize(tmp_path)["samples"] == 4
    assert summarize(tmp_path / "nowhere") is None


@pytest.mark.gpu
def test_nvml_sampling_on_a_gpu(tmp_path):
    import subprocess
    import sys

    m = Monitor(tmp_path, interval=0.5, gpus=1)
    with m.stage("solve"):
        subprocess.run(
            [
                sys.executable,
                "-c",
                "import torch, time; x = torch.randn(8192, 8192, device='cuda'); t = time.time()\n"
                "while time.time() - t < 4: x = x @ x; x = x / x.norm()\ntorch.cuda.synchronize()",
            ],
            check=True,
        )
    samples = read_jsonl(tmp_path / "monitor.jsonl")
    assert all("gpus" in s for s in samples), samples
    summary = summarize(tmp_path)
    assert summary["gpu_count"] == 1 and summary["gpu_util_max"] > 10
    assert summary["gpu_memory_peak_bytes"] > 256 * 2**20 and summary["gpu_hours"] > 0


def test_the_default_interval_stays_out_of_trial_json():
    """Trials planned before the monitor existed must still match their campaign when re-planned."""
    from ptbench.spec.campaign import Budget

    assert "monitor_seconds" not in Budget(hours=1).model_dump_json()
    assert Budget.model_validate_json(Budget(hours=1, monitor_seconds=5).model_dump_json()).monitor_seconds == 5
