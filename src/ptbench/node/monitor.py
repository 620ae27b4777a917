"""What a trial used: GPU utilisation and memory (NVML), CPU, RAM and disk of the runner's process
tree, sampled every N seconds by a background thread of the runner during solve and evaluate.

Samples go to `<trial>/monitor.jsonl` (one JSON line each, appended, so a resumed trial keeps the
samples of its earlier attempts); `summarize` turns them into the result's `monitor` summary.
The runner is a child subreaper, so every process the agent starts (even a double-forked one) is
in its tree and counted.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import psutil

from ptbench.core.files import append_jsonl, read_jsonl
from ptbench.node import nvml

MONITOR_FILE = "monitor.jsonl"
MONITORED_STAGES = ("solve", "evaluate")


def _dir_bytes(root: Path) -> int:
    """Bytes of regular files under root (links not followed: a link to the HF cache is not the trial's)."""
    total = 0
    stack = [root]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for entry in it:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(Path(entry.path))
                        elif entry.is_file(follow_symlinks=False):
                            total += entry.stat(follow_symlinks=False).st_size
                    except OSError:
                        continue  # a file the agent just deleted
        except OSError:
            continue
    return total


class Monitor:
    """`with monitor.stage("solve"): ...` samples while the stage runs (other stages: nothing)."""

    def __init__(self, trial_dir: str | os.PathLike[str], *, interval: float = 60.0, gpus: int = 0) -> None:
        self.trial_dir = Path(trial_dir)
        self.path = self.trial_dir / MONITOR_FILE
        self.interval = max(float(interval), 0.05)
        self.gpus = gpus
        self._cpu_seen: dict[int, float] = {}
        self._nv: ModuleType | None = None
        self._gpu_list: list[nvml.Gpu] = []
        self.gpu_error: str | None = None

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        if name not in MONITORED_STAGES:
            yield
            return
        stop = threading.Event()
        self._open_gpus()
        last = [time.monotonic()]
        self._safe_sample(name, 0.0)  # a baseline for the CPU deltas
        thread = threading.Thread(
            target=self._loop, args=(name, stop, last), name=f"ptbench-monitor-{name}", daemon=True
        )
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join(timeout=30)
            self._safe_sample(name, time.monotonic() - last[0])
            self._close_gpus()

    def _loop(self, name: str, stop: threading.Event, last: list[float]) -> None:
        while not stop.wait(self.interval):
            now = time.monotonic()
            self._safe_sample(name, now - last[0])
            last[0] = now

    def _safe_sample(self, name: str, dt: float) -> None:
        try:
            self._sample(name, dt)
        except Exception as exc:  # a monitor must never take the trial down
            try:
                append_jsonl(self.path, {"time": time.time(), "stage": name, "error": f"{type(exc).__name__}: {exc}"})
            except OSError:
                pass

    def _open_gpus(self) -> None:
        if self.gpus <= 0:
            return
        try:
            self._nv = nvml.init()
            self._gpu_list = nvml.visible_gpus(self._nv)[: self.gpus]
        except Exception as exc:
            self._nv, self._gpu_list, self.gpu_error = None, [], str(exc)

    def _close_gpus(self) -> None:
        if self._nv is not None:
            nvml.shutdown()
            self._nv = None

    def _tree(self) -> list[psutil.Process]:
        me = psutil.Process()
        return [me, *me.children(recursive=True)]

    def _sample(self, stage: str, dt: float) -> None:
        procs, cpu_delta, rss, read, written = 0, 0.0, 0, 0, 0
        seen: dict[int, float] = {}
        for p in self._tree():
            try:
                with p.oneshot():
                    t = p.cpu_times()
                    cpu = t.user + t.system
                    rss += p.memory_info().rss
                    try:
                        io = p.io_counters()
                        read, written = read + io.read_bytes, written + io.write_bytes
                    except (psutil.AccessDenied, AttributeError):
                        pass
            except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):
                continue
            procs += 1
            seen[p.pid] = cpu
            # a process first seen now started since the last sample: all its CPU time is new
            cpu_delta += max(cpu - self._cpu_seen.get(p.pid, 0.0), 0.0) if dt > 0 else 0.0
        self._cpu_seen = seen
        disk = shutil.disk_usage(self.trial_dir)
        sample: dict[str, Any] = {
            "time": round(time.time(), 3),
            "stage": stage,
            "dt": round(dt, 3),
            "processes": procs,
            "cpu_percent": round(100.0 * cpu_delta / dt, 1) if dt > 0 else None,
            "rss_bytes": rss,
            "io_read_bytes": read,
            "io_write_bytes": written,
            "trial_dir_bytes": _dir_bytes(self.trial_dir),
            "disk_free_bytes": disk.free,
        }
        if self._nv is not None:
            gpus: list[dict[str, Any]] = []
            ours = {p.pid for p in self._tree()}
            for g in self._gpu_list:
                try:
                    util, used = nvml.utilization(self._nv, g)
                    fresh = nvml.describe(self._nv, g.index, g.handle)
                    mine = sum(p.used_bytes or 0 for p in fresh.processes if p.pid in ours)
                    gpus.append(
                        {"index": g.index, "util_percent": util, "memory_used_bytes": used, "memory_tree_bytes": mine}
                    )
                except Exception as exc:
                    gpus.append({"index": g.index, "error": str(exc)})
            sample["gpus"] = gpus
        elif self.gpus > 0:
            sample["gpu_error"] = self.gpu_error
        append_jsonl(self.path, sample)


def summarize(trial_dir: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The result's `monitor` summary from monitor.jsonl; None when nothing was sampled."""
    path = Path(trial_dir) / MONITOR_FILE
    if not path.exists():
        return None
    samples = [s for s in read_jsonl(path) if "error" not in s]
    if not samples:
        return None
    timed = [s for s in samples if s.get("dt")]
    seconds = sum(s["dt"] for s in timed)
    cpu = [s["cpu_percent"] for s in timed if s.get("cpu_percent") is not None]
    out: dict[str, Any] = {
        "samples": len(samples),
        "monitored_seconds": round(seconds, 1),
        "cpu_percent_mean": round(sum(cpu) / len(cpu), 1) if cpu else None,
        "cpu_percent_max": max(cpu) if cpu else None,
        "rss_peak_bytes": max(s.get("rss_bytes", 0) for s in samples),
        "trial_dir_peak_bytes": max(s.get("trial_dir_bytes", 0) for s in samples),
        "disk_free_min_bytes": min(s.get("disk_free_bytes", 0) for s in samples),
    }
    gpu_samples = [s for s in samples if s.get("gpus")]
    if gpu_samples:
        utils = [g["util_percent"] for s in gpu_samples if s.get("dt") for g in s["gpus"] if "util_percent" in g]
        memory = [g["memory_used_bytes"] for s in gpu_samples for g in s["gpus"] if "memory_used_bytes" in g]
        gpu_seconds = sum(s["dt"] * len(s["gpus"]) for s in gpu_samples if s.get("dt"))
        out.update(
            gpu_count=max(len(s["gpus"]) for s in gpu_samples),
            gpu_util_mean=round(sum(utils) / len(utils), 1) if utils else None,
            gpu_util_max=max(utils) if utils else None,
            gpu_memory_peak_bytes=max(memory) if memory else None,
            gpu_hours=round(gpu_seconds / 3600, 4),
        )
    return out
