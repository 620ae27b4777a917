"""The GPUs this job was given, read through NVML (`nvidia-ml-py`, imported lazily: `ptbench[node]`).

NVML enumerates every GPU of the node and ignores CUDA_VISIBLE_DEVICES, so `visible_gpus` maps the
variable's entries (indices or GPU-/MIG- UUIDs) to devices itself. A test can replace the module
with `use_module` (a stand-in with the same functions) where no GPU exists.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

_module: ModuleType | None = None


class NvmlUnavailable(Exception):
    """NVML cannot be used here: the library is missing, or the driver does not answer."""


def use_module(module: ModuleType | None) -> None:
    """Replace pynvml (tests); None restores the real one on the next call."""
    global _module
    _module = module


def _nvml() -> ModuleType:
    global _module
    if _module is None:
        try:
            _module = importlib.import_module("pynvml")
        except ImportError as exc:
            raise NvmlUnavailable("nvidia-ml-py is not installed (pip install 'ptbench[node]')") from exc
    return _module


@dataclass
class GpuProcess:
    pid: int
    used_bytes: int | None


@dataclass
class Gpu:
    index: int
    uuid: str
    name: str
    memory_total: int
    memory_used: int
    processes: list[GpuProcess] = field(default_factory=list)
    handle: Any = None


@dataclass
class Driver:
    driver_version: str
    cuda_version: str
    count: int


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def init() -> ModuleType:
    nv = _nvml()
    try:
        nv.nvmlInit()
    except Exception as exc:  # NVMLError_LibraryNotFound, DriverNotLoaded, ...
        raise NvmlUnavailable(f"NVML did not start: {exc}") from exc
    return nv


def shutdown() -> None:
    try:
        _nvml().nvmlShutdown()
    except Exception:
        pass


def driver() -> Driver:
    nv = init()
    try:
        cuda = nv.nvmlSystemGetCudaDriverVersion()
        return Driver(
            _text(nv.nvmlSystemGetDriverVersion()), f"{cuda // 1000}.{cuda % 1000 // 10}", nv.nvmlDeviceGetCount()
        )
    finally:
        shutdown()


def describe(nv: ModuleType, index: int, handle: Any) -> Gpu:
    mem = nv.nvmlDeviceGetMemoryInfo(handle)
    procs: list[GpuProcess] = []
    for getter in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
        for p in getattr(nv, getter)(handle):
            used = getattr(p, "usedGpuMemory", None)
            procs.append(GpuProcess(pid=int(p.pid), used_bytes=used if isinstance(used, int) else None))
    return Gpu(
        index=index,
        uuid=_text(nv.nvmlDeviceGetUUID(handle)),
        name=_text(nv.nvmlDeviceGetName(handle)),
        memory_total=int(mem.total),
        memory_used=int(mem.used),
        processes=procs,
        handle=handle,
    )


def visible_gpus(nv: ModuleType, visible: str | None = None) -> list[Gpu]:
    """The devices CUDA would show this process, in CUDA's order. Call between `init` and `shutdown`."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES") if visible is None else visible
    count = nv.nvmlDeviceGetCount()
    if visible is None:
        return [describe(nv, i, nv.nvmlDeviceGetHandleByIndex(i)) for i in range(count)]
    gpus = []
    for entry in (e.strip() for e in visible.split(",")):
        if not entry:
            continue
        if entry.isdigit():
            if int(entry) >= count:
                break  # CUDA stops at the first invalid entry
            gpus.append(describe(nv, int(entry), nv.nvmlDeviceGetHandleByIndex(int(entry))))
        else:
            handle = nv.nvmlDeviceGetHandleByUUID(entry.encode() if isinstance(entry, str) else entry)
            gpus.append(describe(nv, nv.nvmlDeviceGetIndex(handle), handle))
    return gpus


def utilization(nv: ModuleType, gpu: Gpu) -> tuple[int, int]:
    """(GPU busy %, memory used bytes) now."""
    util = nv.nvmlDeviceGetUtilizationRates(gpu.handle)
    return int(util.gpu), int(nv.nvmlDeviceGetMemoryInfo(gpu.handle).used)
