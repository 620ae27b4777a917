"""The agent's HF cache as a per-trial copy-on-write layer, so the shared cache stays evidence.

The shared Hugging Face cache holds the base model, the forbidden models and the datasets the
integrity checks compare against; an agent that could write it could delete that evidence before
the checks run, or poison the cache for later trials. So, under bwrap and apptainer, the agent
never gets it writable:

- `overlay` (where fuse-overlayfs and /dev/fuse work): the runner mounts, outside the sandbox,
  fuse-overlayfs with the shared cache as the read-only lower layer and `hf-layer/upper` in the
  trial directory as the upper layer; the merged view is bound where the cache was. The agent can
  download, change and delete as it likes: all of it lands in the upper layer, which is exactly
  what it added or changed (the integrity checks read it). Unmounted on every way out of the solve
  stage; a mount left by a runner killed -9 is removed when the trial starts again.
- `read-only` (no fuse-overlayfs, no /dev/fuse, or the mount failed): the shared cache bound
  read-only; a write fails. Recorded with the reason, never silently writable.
- `shared` (`sandbox: none` only): the agent runs as the runner's user without a mount namespace
  and writes the shared cache directly; recorded, like the unsandboxed run itself.

The fuse-overlayfs daemon must outlive every run of the agent (continuations included) and must
not be one of the processes the watchdog sweeps at the deadline: it is started while the runner
is briefly not a subreaper (no agent process exists then), so it is adopted by init, not by us.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from ptbench.core.prctl import is_child_subreaper, set_child_subreaper
from ptbench.node.mounts import mounts
from ptbench.runner.watchdog import become_subreaper
from ptbench.sandbox.request import sandbox_facts

MODES = ("overlay", "read-only", "shared")


@dataclass
class CacheLayer:
    shared: Path  # the shared cache, and where the agent sees its view of it
    mode: str  # one of MODES
    source: Path  # what is bound at `shared` inside the sandbox
    upper: Path | None = None  # overlay: what the agent added, changed or deleted (whiteouts)
    reason: str = ""  # why not overlay
    binds: list[tuple[Path, Path, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, str]:
        return {
            "mode": self.mode,
            "shared": str(self.shared),
            **({"upper": str(self.upper)} if self.upper else {}),
            **({"reason": self.reason} if self.reason else {}),
        }


def shared_cache() -> Path | None:
    """The HF cache the agent's tools would use (HF_HOME, HF_HUB_CACHE, else ~/.cache/huggingface)."""
    hf = os.environ.get("HF_HOME") or os.environ.get("HF_HUB_CACHE")
    if hf:
        return Path(hf).resolve() if Path(hf).is_dir() else None
    default = Path.home() / ".cache" / "huggingface"
    return default.resolve() if default.is_dir() else None


def overlay_problem() -> str | None:
    """None where this node can mount a fuse-overlayfs layer, else why not (one line)."""
    if not shutil.which("fuse-overlayfs"):
        return "fuse-overlayfs is not installed (apt-get install fuse-overlayfs)"
    if not os.path.exists("/dev/fuse"):
        return "/dev/fuse is missing"
    if not _unmounter():
        return "neither fusermount3 nor (as root) umount is available to remove the layer again"
    if os.geteuid() != 0 and not _setuid(shutil.which("fusermount3") or shutil.which("fusermount") or ""):
        return "fusermount3 is not setuid root, so this user cannot mount FUSE file systems"
    return None


def _setuid(path: str) -> bool:
    try:
        return bool(path) and bool(os.stat(path).st_mode & 0o4000)
    except OSError:
        return False


def _unmounter() -> list[str] | None:
    exe = shutil.which("fusermount3") or shutil.which("fusermount")
    if exe:
        return [exe, "-u"]
    if os.geteuid() == 0 and shutil.which("umount"):
        return ["umount"]
    return None


def mounted(path: Path) -> bool:
    """Whether `path` is a mount point now (also a dead FUSE mount, which stat() cannot tell)."""
    try:
        return any(m.mount_point == str(path) for m in mounts())
    except OSError:
        return False


def unmount(merged: Path) -> None:
    """Unmount the layer (lazily if something still holds it) and wait for its daemon to go."""
    argv = _unmounter()
    if argv and mounted(merged):
        if subprocess.run([*argv, str(merged)], capture_output=True, timeout=30).returncode != 0:
            lazy = [argv[0], "-uz"] if "fusermount" in argv[0] else ["umount", "-l"]
            subprocess.run([*lazy, str(merged)], capture_output=True, timeout=30)
    daemons = _daemons(merged)
    gone, alive = psutil.wait_procs(daemons, timeout=5)
    for p in alive:  # unmounted but still running: nothing may be left behind
        try:
            p.kill()
        except psutil.Error:
            pass
    if mounted(merged):
        raise RuntimeError(f"could not unmount the trial's HF cache layer at {merged}")


def _daemons(merged: Path) -> list[psutil.Process]:
    out = []
    for p in psutil.process_iter(["name", "cmdline"]):
        try:
            cmd = p.info["cmdline"] or []
            if p.info["name"] == "fuse-overlayfs" and cmd and cmd[-1] == str(merged):
                out.append(p)
        except psutil.Error:
            continue
    return out


def _mount(shared: Path, root: Path) -> tuple[Path, Path]:
    upper, work, merged = root / "upper", root / "work", root / "merged"
    if mounted(merged):  # left by a runner killed -9: the upper layer (the agent's changes so far) is kept
        unmount(merged)
    for d in (upper, merged):
        d.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    for p in (shared, upper, work):
        if any(c in str(p) for c in ",:="):  # fuse-overlayfs's option syntax has no escaping
            raise RuntimeError(f"path {p} has a ',', ':' or '=' that fuse-overlayfs options cannot carry")
    argv = [
        shutil.which("fuse-overlayfs") or "fuse-overlayfs",
        "-o",
        f"lowerdir={shared},upperdir={upper},workdir={work}",
        str(merged),
    ]
    was_subreaper = is_child_subreaper()
    if was_subreaper:
        set_child_subreaper(False)  # the daemon it forks goes to init, out of the watchdog's sweep
    try:
        # Its own minimal environment: the daemon outlives nothing of ours, but must not carry a key.
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
        out = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, env=env)
    finally:
        if was_subreaper and not become_subreaper():
            unmount(merged)
            raise RuntimeError("could not become a subreaper again after mounting the HF cache layer")
    if out.returncode != 0 or not mounted(merged):
        why = (out.stderr.strip().splitlines() or [f"exit {out.returncode}"])[-1][:200]
        raise RuntimeError(f"fuse-overlayfs failed: {why}")
    return upper, merged


def probe_overlay() -> str | None:
    """None where a layer really mounts and unmounts here (tried in a scratch directory), else why not."""
    problem = overlay_problem()
    if problem:
        return problem
    with tempfile.TemporaryDirectory(prefix="ptbench-layer-probe-") as tmp:
        lower = Path(tmp) / "lower"
        lower.mkdir()
        try:
            _, merged = _mount(lower, Path(tmp) / "layer")
            (merged / "probe").write_text("x")
            unmount(merged)
        except (OSError, RuntimeError, subprocess.TimeoutExpired) as exc:
            return str(exc)[:200]
        if (lower / "probe").exists() or not (Path(tmp) / "layer" / "upper" / "probe").exists():
            return "fuse-overlayfs mounted, but a write did not land in the upper layer"
    return None


@contextmanager
def cache_layer(root: Path, sandbox: str, shared: Path | None = None) -> Iterator[CacheLayer | None]:
    """The agent's view of the shared HF cache for one solve stage (None: there is no HF cache)."""
    shared = shared if shared is not None else shared_cache()
    if shared is None:
        yield None
        return
    if not sandbox_facts(sandbox).isolates:
        yield CacheLayer(
            shared, "shared", shared, reason=f"sandbox {sandbox}: no mount namespace", binds=[(shared, shared, "rw")]
        )
        return
    problem = overlay_problem()
    merged = root / "merged"
    if problem is None:
        try:
            upper, merged = _mount(shared, root)
        except (OSError, RuntimeError, subprocess.TimeoutExpired) as exc:
            problem = str(exc)
    if problem is not None:
        yield CacheLayer(shared, "read-only", shared, reason=problem, binds=[(shared, shared, "ro")])
        return
    try:
        yield CacheLayer(shared, "overlay", merged, upper=upper, binds=[(merged, shared, "rw")])
    finally:
        # Give the daemon a moment if the agent's last writes are still in flight, then insist.
        deadline = time.monotonic() + 5
        while True:
            try:
                unmount(merged)
                break
            except (RuntimeError, subprocess.TimeoutExpired):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
