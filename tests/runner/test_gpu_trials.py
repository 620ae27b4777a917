"""GPU tests (marker `gpu`, excluded by default): run them on a GPU machine with
`bash scripts/test.sh -m gpu` (installs the GPU stack: `bash scripts/install.sh gpu`), or after that
install `python -m pytest -m gpu tests/runner/test_gpu_trials.py tests/node`.

- vLLM evaluation of a tiny model on CUDA through `ptbench eval`;
- the reference agent (TRL SFT) end to end on one GPU: the node check passes for real, the monitor
  samples the GPU through NVML and the result carries GPU-hours.
The NVML-level checks (node checks with a real GPU, NVML sampling) are in tests/node.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import ptbench

pytestmark = pytest.mark.gpu


def _gpu_name() -> str:
    import torch

    assert torch.cuda.is_available(), "no CUDA device: run the gpu tests on a GPU machine"
    return torch.cuda.get_device_name(0)


def test_vllm_evaluates_a_tiny_model_on_the_gpu(tiny_model, tmp_path):
    _gpu_name()
    out = tmp_path / "eval"
    run = ptbench(
        "eval",
        "arithmetic",
        "--model",
        str(tiny_model),
        "--engine",
        "vllm",
        "--limit",
        "16",
        "--out",
        str(out),
        "--task-options",
        json.dumps({"n_test": 16}),
        timeout=1200,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["primary"]["n"] == 16 and 0.0 <= metrics["primary"]["value"] <= 1.0
    assert "vllm" in json.dumps(metrics.get("settings", {})).lower()


CAMPAIGN = """
name: gpu-ref
agents: [{name: reference, options: {max_steps: 60, batch_size: 32}}]
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [{name: arithmetic, options: {n_test: 32}}]
budget: {hours: 0.25, gpus: 1, gpu_type: "@GPU@", eval_minutes: 20, monitor_seconds: 2}
evaluation: {engine: vllm}
results_dir: "@RESULTS@"
"""


def test_reference_agent_on_one_gpu_with_node_check_and_monitor(write_campaign, tmp_path):
    """Sandboxed as a campaign is by default (bwrap binds /dev/nvidia* into the sandbox)."""
    from ptbench.sandbox.bwrap import bwrap_problem

    name = _gpu_name()
    assert bwrap_problem() is None, (
        f"bubblewrap cannot start a sandbox here ({bwrap_problem()}): bash scripts/install.sh gpu installs it"
    )
    path = write_campaign(CAMPAIGN.replace("@GPU@", name.split()[1] if len(name.split()) > 1 else name))
    run = ptbench("run", str(path), cwd=tmp_path, timeout=1800)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    trial = tmp_path / "results" / "gpu-ref" / "reference__tiny__arithmetic__s0"
    result = json.loads((trial / "result.json").read_text())
    assert result["status"] == "completed", result.get("failure")
    assert result["sandbox"] == "bwrap"
    state = json.loads((trial / "state.json").read_text())
    assert "CUDA write ok" in state["stages"]["prepare"]["detail"]["gpus"]
    mon = result["monitor"]
    assert mon["gpu_count"] == 1 and mon["gpu_hours"] > 0 and mon["gpu_memory_peak_bytes"] > 0
    assert mon["gpu_util_max"] is not None
