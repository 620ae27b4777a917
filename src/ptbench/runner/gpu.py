"""Does this node really have the GPUs the trial asked for? Checked before the agent starts."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass


@dataclass
class GpuCheck:
    ok: bool
    message: str
    names: list[str]


def check_gpus(wanted: int, gpu_type: str | None = None) -> GpuCheck:
    """Visible, usable and of the wanted type. A node without them is a retryable failure."""
    if wanted <= 0:
        return GpuCheck(True, "no GPU requested", [])
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip() in ("", "-1", "NoDevFiles"):
        return GpuCheck(False, f"CUDA_VISIBLE_DEVICES={visible!r} hides every GPU", [])
    if not shutil.which("nvidia-smi"):
        return GpuCheck(False, f"{wanted} GPU(s) requested but nvidia-smi is not on this node (CUDA_VISIBLE_DEVICES={visible!r})", [])
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader"]
            + ([f"--id={visible}"] if visible else []),  # nvidia-smi ignores CUDA_VISIBLE_DEVICES
            capture_output=True, text=True, timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return GpuCheck(False, f"nvidia-smi failed: {exc}", [])
    if out.returncode != 0:
        return GpuCheck(False, f"nvidia-smi failed: {(out.stderr or out.stdout).strip()[:200]}", [])
    names = [line.split(",")[0].strip() for line in out.stdout.splitlines() if line.strip()]
    if len(names) < wanted:
        return GpuCheck(False, f"{wanted} GPU(s) requested, {len(names)} visible: {names}", names)
    if gpu_type and not all(gpu_type.lower() in n.lower() for n in names[:wanted]):
        return GpuCheck(False, f"GPU type {gpu_type} requested, node has {names[:wanted]}", names)
    try:
        # The runner's own interpreter: the one the agent and the evaluation will use.
        probe = subprocess.run(
            [sys.executable, "-c", "import torch,sys; x=torch.ones(1,device='cuda'); sys.exit(0 if (x+1).item()==2 else 1)"],
            capture_output=True, text=True, timeout=300,
        ) if _has_torch() else None
    except subprocess.TimeoutExpired:
        return GpuCheck(False, "GPU visible but CUDA initialisation hung for 300 s", names)
    if probe is not None and probe.returncode != 0:
        return GpuCheck(False, f"GPU visible but not usable from torch: {probe.stderr.strip()[-200:]}", names)
    return GpuCheck(True, f"{len(names)} GPU(s): {', '.join(names)}", names)


def _has_torch() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None
