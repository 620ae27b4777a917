"""Before the agent starts: are the GPUs this job got the ones asked for, free, and writable?

Three checks, all of which must pass (the runner turns a failure into a retryable `no_gpu`, exit 75):
1. count and type: at least `wanted` visible devices (NVML, mapped through CUDA_VISIBLE_DEVICES),
   each with `gpu_type` in its name (case-insensitive, e.g. "H100" matches "NVIDIA H100 80GB HBM3");
2. nobody else on them: no compute or graphics process of another process tree, and no more memory
   in use than an idle GPU shows (processes of other containers are invisible to NVML, their memory is not);
3. a CUDA write succeeds: a tiny torch op on every device, in a subprocess with a time limit
   (a wedged GPU hangs CUDA initialisation rather than failing it).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field

import psutil

from ptbench.node import nvml

IDLE_MEMORY_BYTES = int(os.environ.get("PTBENCH_GPU_IDLE_MEMORY_MB", "2048")) * 2**20
CUDA_PROBE_SECONDS = 300

_CUDA_PROBE = """
import sys, torch
n = int(sys.argv[1])
if torch.cuda.device_count() < n:
    sys.exit(f"torch sees {torch.cuda.device_count()} CUDA device(s), {n} wanted")
for i in range(n):
    x = torch.ones(4, device=f"cuda:{i}")
    y = (x * 2).sum().item()
    torch.cuda.synchronize(i)
    if y != 8.0:
        sys.exit(f"cuda:{i} computed {y}, not 8.0")
"""


@dataclass
class GpuCheck:
    ok: bool
    message: str
    names: list[str] = field(default_factory=list)


def _own_pids() -> set[int]:
    me = psutil.Process()
    pids = {me.pid} | {p.pid for p in me.children(recursive=True)}
    pids |= {p.pid for p in me.parents()}  # the job step / shell that started this runner
    return pids


def check_gpus(
    wanted: int, gpu_type: str | None = None, *, python: str | None = None, probe_seconds: float = CUDA_PROBE_SECONDS
) -> GpuCheck:
    """Visible, of the wanted type and count, unused by others, and writable from torch."""
    if wanted <= 0:
        return GpuCheck(True, "no GPU requested")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip() in ("", "-1", "NoDevFiles"):
        return GpuCheck(False, f"CUDA_VISIBLE_DEVICES={visible!r} hides every GPU")
    try:
        nv = nvml.init()
    except nvml.NvmlUnavailable as exc:
        return GpuCheck(False, f"{wanted} GPU(s) requested but NVML is not usable on this node: {exc}")
    try:
        gpus = nvml.visible_gpus(nv)
    except Exception as exc:  # an NVMLError for an unknown UUID, a lost GPU, ...
        return GpuCheck(False, f"NVML could not read the GPUs (CUDA_VISIBLE_DEVICES={visible!r}): {exc}")
    finally:
        nvml.shutdown()
    names = [g.name for g in gpus]
    if len(gpus) < wanted:
        return GpuCheck(False, f"{wanted} GPU(s) requested, {len(gpus)} visible: {names}", names)
    gpus = gpus[:wanted]
    if gpu_type and not all(gpu_type.lower() in g.name.lower() for g in gpus):
        return GpuCheck(False, f"GPU type {gpu_type} requested, node has {[g.name for g in gpus]}", names)
    ours = _own_pids()
    for g in gpus:
        foreign = [p.pid for p in g.processes if p.pid not in ours]
        if foreign:
            return GpuCheck(False, f"GPU {g.index} ({g.uuid}) is in use by other processes: pid(s) {foreign}", names)
        if g.memory_used > IDLE_MEMORY_BYTES:
            return GpuCheck(
                False,
                f"GPU {g.index} ({g.uuid}) has {g.memory_used / 2**30:.1f} GiB in use by no process of this job "
                f"(another container?); an idle GPU uses under {IDLE_MEMORY_BYTES / 2**30:.1f} GiB",
                names,
            )
    write = cuda_write(wanted, python=python, timeout=probe_seconds)
    if write is not None:
        return GpuCheck(False, write, names)
    return GpuCheck(True, f"{wanted} GPU(s): {', '.join(g.name for g in gpus)}; free; CUDA write ok", names)


def cuda_write(n: int, *, python: str | None = None, timeout: float = CUDA_PROBE_SECONDS) -> str | None:
    """None when a tiny torch op succeeds on each of the first n devices, else why not.

    It runs in the interpreter the agent and the evaluation use (the runner's own by default)."""
    try:
        probe = subprocess.run(
            [python or sys.executable, "-c", _CUDA_PROBE, str(n)], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return f"GPU visible but a CUDA write did not finish in {timeout:.0f} s (wedged GPU?)"
    except OSError as exc:
        return f"could not start the CUDA write probe: {exc}"
    if probe.returncode != 0:
        return f"GPU visible but a CUDA write failed: {(probe.stderr or probe.stdout).strip()[-300:]}"
    return None
