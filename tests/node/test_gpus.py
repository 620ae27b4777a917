"""Node checks before the agent: GPU type, count, foreign processes, a CUDA write.

This machine has no GPU, so NVML is replaced at its seam by tests/node/fake_nvml/pynvml.py (a
stand-in answering the same NVML calls from a JSON description); the CUDA write is the real probe
(real torch, which finds no CUDA device here). The `gpu`-marked tests at the end run everything for
real on a GPU machine (`bash scripts/test.sh -m gpu`).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from ptbench.node import gpus as gpu_checks
from ptbench.node import nvml
from tests.conftest import ptbench

FAKE_DIR = Path(__file__).parent / "fake_nvml"
H100 = "NVIDIA H100 80GB HBM3"


@pytest.fixture
def fake_nvml(monkeypatch):
    real = sys.modules.pop("pynvml", None)  # another test (doctor, monitor) may have imported the real one
    sys.path.insert(0, str(FAKE_DIR))
    try:
        import pynvml as fake  # the stand-in: this directory is first on sys.path
    finally:
        sys.path.remove(str(FAKE_DIR))
    assert fake.__file__.startswith(str(FAKE_DIR))
    sys.modules.pop("pynvml", None)
    if real is not None:
        sys.modules["pynvml"] = real
    nvml.use_module(fake)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)

    def describe(*gpus: dict) -> None:
        monkeypatch.setenv("PTBENCH_FAKE_NVML", json.dumps({"gpus": list(gpus)}))

    yield describe
    nvml.use_module(None)


def gpu(name=H100, uuid="GPU-aaaa", used=4e8, processes=()):
    return {"name": name, "uuid": uuid, "used": used, "processes": list(processes)}


def test_wrong_gpu_type_is_refused(fake_nvml):
    fake_nvml(gpu(name="NVIDIA A100-SXM4-40GB"))
    check = gpu_checks.check_gpus(1, "H100")
    assert not check.ok and "GPU type H100 requested" in check.message and "A100" in check.message


def test_fewer_gpus_than_requested_is_refused(fake_nvml):
    fake_nvml(gpu(), gpu(uuid="GPU-bbbb"))
    check = gpu_checks.check_gpus(4, "H100")
    assert not check.ok and "4 GPU(s) requested, 2 visible" in check.message


def test_cuda_visible_devices_limits_the_count(fake_nvml, monkeypatch):
    fake_nvml(gpu(), gpu(uuid="GPU-bbbb"))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    check = gpu_checks.check_gpus(2, "H100")
    assert not check.ok and "2 GPU(s) requested, 1 visible" in check.message


def test_a_foreign_process_on_the_gpu_is_refused(fake_nvml):
    fake_nvml(gpu(processes=[{"pid": 4_000_000, "used": 30e9}]))
    check = gpu_checks.check_gpus(1, "H100")
    assert not check.ok and "in use by other processes" in check.message and "4000000" in check.message


def test_memory_used_by_an_invisible_process_is_refused(fake_nvml):
    """Processes of another container do not show in NVML; their memory does."""
    fake_nvml(gpu(used=20 * 2**30))
    check = gpu_checks.check_gpus(1, "H100")
    assert not check.ok and "20.0 GiB in use by no process of this job" in check.message


def test_a_uuid_in_cuda_visible_devices_picks_that_gpu(fake_nvml, monkeypatch):
    # GPU 0 is the wrong type; the job was given GPU-bbbb (an H100), used by this very process.
    fake_nvml(gpu(name="Tesla V100"), gpu(uuid="GPU-bbbb", processes=[{"pid": os.getpid(), "used": 1e9}]))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-bbbb")
    check = gpu_checks.check_gpus(1, "H100")
    # Every NVML check passes; the real CUDA write cannot succeed on this CPU-only machine.
    assert not check.ok and "CUDA write" in check.message, check.message
    assert check.names == [H100]


def test_the_cuda_write_probe_is_real_and_has_a_time_limit(tmp_path):
    hang = tmp_path / "python"
    hang.write_text("#!/bin/sh\nexec sleep 30\n")
    hang.chmod(0o755)
    assert "did not finish in 1 s" in gpu_checks.cuda_write(1, python=str(hang), timeout=1)
    assert "CUDA write failed" in gpu_checks.cuda_write(1)  # torch without a CUDA device here


def test_no_nvml_means_no_gpu(monkeypatch):
    nvml.use_module(None)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    check = gpu_checks.check_gpus(1)
    assert not check.ok and "NVML is not usable" in check.message


CAMPAIGN = """
name: nodecheck
agents: [{name: quick-copy}]
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [{name: arithmetic, options: {n_test: 4}}]
budget: {hours: 1, gpus: 1, gpu_type: H100}
results_dir: "@RESULTS@"
max_requeues: 0
"""


def test_a_busy_gpu_stops_the_trial_before_the_agent_exit_75_then_setup_failed(write_campaign, test_agents, tmp_path):
    """The real runner process, given the NVML stand-in through PYTHONPATH."""
    path = write_campaign(CAMPAIGN)
    assert ptbench("plan", str(path), cwd=tmp_path).returncode == 0
    trial = tmp_path / "results" / "nodecheck" / "quick-copy__tiny__arithmetic__s0"
    env = {
        "PYTHONPATH": os.pathsep.join([str(FAKE_DIR), os.environ.get("PYTHONPATH", "")]),
        "PTBENCH_FAKE_NVML": json.dumps({"gpus": [gpu(processes=[{"pid": 4_000_001, "used": 5e9}])]}),
    }
    first = ptbench("trial", "run", str(trial), env=env)
    assert first.returncode == 75, first.stderr
    state = json.loads((trial / "state.json").read_text())
    assert state["failure"]["kind"] == "no_gpu" and state["failure"]["retryable"] is True
    assert "4000001" in state["failure"]["message"]
    assert not (trial / "workspace").exists()  # the agent never started
    last = ptbench("trial", "run", str(trial), env=env)
    assert last.returncode == 0
    result = json.loads((trial / "result.json").read_text())
    assert result["status"] == "setup_failed" and result["failure"]["kind"] == "no_gpu"
    assert "in use by other processes" in result["failure"]["message"]


# ---- on a GPU machine ---------------------------------------------------------------------------


@pytest.mark.gpu
def test_real_gpu_passes_every_check():
    import torch

    nvml.use_module(None)
    assert torch.cuda.is_available()
    name = torch.cuda.get_device_name(0)
    check = gpu_checks.check_gpus(1, name.split()[-1] if " " in name else name)
    assert check.ok, check.message
    assert "CUDA write ok" in check.message


@pytest.mark.gpu
def test_real_gpu_wrong_type_and_count_are_refused():
    import torch

    nvml.use_module(None)
    n = torch.cuda.device_count()
    assert not gpu_checks.check_gpus(n + 1).ok
    assert not gpu_checks.check_gpus(1, "NoSuchGPU9000").ok


@pytest.mark.gpu
def test_real_gpu_foreign_process_is_refused(tmp_path):
    """Another process tree holding the GPU (a CUDA tensor in a separate session) is foreign.

    It holds 4 GiB: in a container NVML may list no process of another PID namespace, and then only
    memory above PTBENCH_GPU_IDLE_MEMORY_MB (default 2 GiB) shows the GPU is busy."""
    import subprocess
    import time

    nvml.use_module(None)
    ready = tmp_path / "ready"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import torch, time, pathlib, sys; x = torch.ones(2**30, device='cuda'); "
            "pathlib.Path(sys.argv[1]).write_text('1'); time.sleep(120)",
            str(ready),
        ],
        start_new_session=True,
    )
    try:
        for _ in range(600):
            if ready.exists():
                break
            time.sleep(0.1)
        assert ready.exists()
        # The holder is our child: run the check from an unrelated process tree.
        out = subprocess.run(
            [
                sys.executable,
                "-c",
                "from ptbench.node.gpus import check_gpus; c = check_gpus(1); print(c.ok, c.message)",
            ],
            capture_output=True,
            text=True,
            timeout=600,
            start_new_session=True,
        )
        assert out.stdout.startswith("False") and ("in use" in out.stdout), out.stdout + out.stderr
    finally:
        holder.kill()
        holder.wait()
