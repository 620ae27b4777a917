"""A stand-in for nvidia-ml-py's `pynvml` on a machine without a GPU (this one has none).

It answers the NVML calls ptbench makes from a JSON description in $PTBENCH_FAKE_NVML:
{"gpus": [{"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-1", "total": 85e9, "used": 4e8,
           "util": 0, "processes": [{"pid": 123, "used": 1e9}]}]}
Put this directory first on PYTHONPATH to give it to a whole `ptbench trial run` process.
Without the variable, nvmlInit fails like a node without a driver.
"""

import json
import os
from types import SimpleNamespace


class NVMLError(Exception):
    pass


def _gpus():
    spec = os.environ.get("PTBENCH_FAKE_NVML")
    if not spec:
        raise NVMLError("Driver Not Loaded")
    return json.loads(spec)["gpus"]


def nvmlInit():
    _gpus()


def nvmlShutdown():
    pass


def nvmlSystemGetDriverVersion():
    return "550.54.15"


def nvmlSystemGetCudaDriverVersion():
    return 12040


def nvmlDeviceGetCount():
    return len(_gpus())


def nvmlDeviceGetHandleByIndex(i):
    gpus = _gpus()
    if i >= len(gpus):
        raise NVMLError("Invalid Argument")
    return i


def nvmlDeviceGetHandleByUUID(uuid):
    uuid = uuid.decode() if isinstance(uuid, bytes) else uuid
    for i, g in enumerate(_gpus()):
        if g["uuid"] == uuid:
            return i
    raise NVMLError("Not Found")


def nvmlDeviceGetIndex(h):
    return h


def nvmlDeviceGetName(h):
    return _gpus()[h]["name"]


def nvmlDeviceGetUUID(h):
    return _gpus()[h]["uuid"]


def nvmlDeviceGetMemoryInfo(h):
    g = _gpus()[h]
    return SimpleNamespace(
        total=int(g.get("total", 85e9)),
        used=int(g.get("used", 4e8)),
        free=int(g.get("total", 85e9) - g.get("used", 4e8)),
    )


def nvmlDeviceGetComputeRunningProcesses(h):
    return [SimpleNamespace(pid=p["pid"], usedGpuMemory=int(p.get("used", 0))) for p in _gpus()[h].get("processes", [])]


def nvmlDeviceGetGraphicsRunningProcesses(h):
    return []


def nvmlDeviceGetUtilizationRates(h):
    return SimpleNamespace(gpu=_gpus()[h].get("util", 0), memory=0)
