"""Does this node really have the GPUs the trial asked for? Checked before the agent starts.

The checks live in `ptbench.node.gpus` (NVML: type, count, foreign processes; a CUDA write)."""

from __future__ import annotations

from ptbench.node.gpus import GpuCheck, check_gpus

__all__ = ["GpuCheck", "check_gpus"]
