"""A cgroup v2 per trial, so the deadline can kill every process of the agent at once (`cgroup.kill`).

Where: a child of the runner's own cgroup (from /proc/self/cgroup's `0::` line), in the cgroup2
hierarchy that /proc/self/mountinfo shows for it — /sys/fs/cgroup on a pure v2 node,
/sys/fs/cgroup/unified on a hybrid one, a systemd user delegation, Slurm's step cgroup where the
job's cgroup is delegated to its user. Only a child is created and no controller is enabled: no
controller is needed for cgroup.kill, and a cgroup with no controllers in its subtree_control may
hold processes beside its children (the "no internal processes" rule applies to controllers), so the
runner can stay where it is. Where the runner may not create that child (not delegated: Slurm's
default step cgroup is root's, a v1-only node, a read-only mount, a kernel before 5.14 without
cgroup.kill), `TrialCgroup.create` says why, and the runner keeps to its subreaper sweep.

The agent enters the cgroup race-free: its command runs through `sh -c 'echo $$ > cgroup.procs;
exec ...'`, so the process has moved before the agent's first instruction, and a failed move stops
it from starting (exit 125) instead of letting it run outside. (A `preexec_fn` would do the same
from Python, but is unsafe in a process with threads, as the runner is.)
"""

from __future__ import annotations

import errno
import hashlib
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from ptbench.node.mounts import mounts

ENTER_FAILED_EXIT = 125


def own_cgroup(proc: Path = Path("/proc/self")) -> tuple[Path | None, str]:
    """(this process's cgroup v2 directory, "") or (None, why there is none)."""
    try:
        lines = (proc / "cgroup").read_text().splitlines()
        table = mounts(proc)
    except OSError as exc:
        return None, f"cannot read {proc}/cgroup or mountinfo ({exc.strerror})"
    path = next((line[3:] for line in lines if line.startswith("0::")), None)
    if path is None:
        return None, "this process is in no cgroup v2 hierarchy (a cgroup v1 only node)"
    for mount in table:
        if mount.fs_type != "cgroup2":
            continue
        root, mountpoint = mount.root, mount.mount_point
        if root != "/" and path != root and not path.startswith(root + "/"):
            continue  # a bind mount of another part of the hierarchy
        relative = path[len(root) :] if root != "/" else path
        candidate = Path(mountpoint) / relative.lstrip("/")
        if (candidate / "cgroup.procs").is_file():
            return candidate, ""
    return None, f"no mounted cgroup2 hierarchy shows this process's cgroup {path}"


def cgroup_problem() -> tuple[Path | None, str]:
    """Without changing anything (for `ptbench doctor`): (the parent trial cgroups would go under, "")
    or (None, why the runner could not make one here)."""
    parent, why = own_cgroup()
    if parent is None:
        return None, why
    if not (os.access(parent, os.W_OK | os.X_OK) and os.access(parent / "cgroup.procs", os.W_OK)):
        return None, f"{parent} is not writable by this user (not delegated)"
    release = tuple(int(x) for x in os.uname().release.split(".")[:2] if x.isdigit())
    if release < (5, 14):
        return None, f"kernel {os.uname().release} has no cgroup.kill (Linux >= 5.14 needed)"
    return parent, ""


def trial_cgroup_name(trial_path: str) -> str:
    """One name per trial folder, so a requeued runner finds what an attempt killed -9 left behind."""
    return "ptbench-trial-" + hashlib.sha256(os.path.realpath(trial_path).encode()).hexdigest()[:16]


@dataclass
class TrialCgroup:
    path: Path

    @classmethod
    def create(cls, trial_path: str, parent: Path | None = None) -> tuple[TrialCgroup | None, str]:
        """A fresh, empty trial cgroup (an earlier attempt's is killed and removed first), or (None, why not)."""
        if parent is None:
            parent, why = own_cgroup()
            if parent is None:
                return None, why
        path = parent / trial_cgroup_name(trial_path)
        if path.exists():
            TrialCgroup(path).kill_and_remove()
        try:
            path.mkdir()
        except OSError as exc:
            return None, f"cannot create a cgroup under {parent} ({exc.strerror}: not delegated to this user)"
        cg = TrialCgroup(path)
        # Moving a process needs write access to both cgroup.procs files (the source's is the parent's).
        if not (path / "cgroup.kill").exists():
            cg.remove()
            return None, "this kernel has no cgroup.kill (Linux >= 5.14 needed)"
        if not (os.access(path / "cgroup.procs", os.W_OK) and os.access(parent / "cgroup.procs", os.W_OK)):
            cg.remove()
            return None, f"cannot move processes into {path} (cgroup.procs not writable: not delegated to this user)"
        return cg, ""

    @classmethod
    def leftover(cls, trial_path: str) -> TrialCgroup | None:
        parent, _ = own_cgroup()
        path = parent / trial_cgroup_name(trial_path) if parent is not None else None
        return TrialCgroup(path) if path is not None and path.is_dir() else None

    def wrap(self, argv: list[str]) -> list[str]:
        """argv run from inside this cgroup: the shell moves itself in, then becomes the command."""
        script = f'echo $$ > "$0" || exit {ENTER_FAILED_EXIT}; exec "$@"'
        return ["/bin/sh", "-c", script, str(self.path / "cgroup.procs"), *argv]

    def pids(self) -> list[int]:
        """Every process in the cgroup and in any cgroup the agent made below it."""
        out: list[int] = []
        for d, _, _ in os.walk(self.path):
            try:
                out += [int(x) for x in Path(d, "cgroup.procs").read_text().split()]
            except (OSError, ValueError):
                continue
        return out

    def populated(self) -> bool:
        try:
            return "populated 1" in (self.path / "cgroup.events").read_text()
        except FileNotFoundError:
            return False

    def wait_empty(self, seconds: float, reap=lambda: None) -> bool:
        end = time.monotonic() + seconds
        while True:
            reap()
            if not self.populated():
                return True
            if time.monotonic() >= end:
                return False
            time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL everything in the cgroup and below, atomically against forks (the kernel's cgroup.kill)."""
        (self.path / "cgroup.kill").write_text("1")

    def remove(self) -> bool:
        """rmdir the cgroup and any the agent made below it (each must be empty); True when gone."""
        for d, _, _ in sorted(os.walk(self.path), key=lambda t: -len(Path(t[0]).parts)):
            for _ in range(50):
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if exc.errno != errno.EBUSY:
                        return False
                    time.sleep(0.02)  # the last exits are still being accounted
        return not self.path.exists()

    def stop(self, grace_seconds: float, *, reap, term_targets, kill_wait: float = 30.0) -> int:
        """SIGTERM the processes `term_targets(pids)` picks, the grace (cut short once the cgroup is
        empty), then cgroup.kill; how many processes there were. New processes get the SIGTERM too."""
        seen: set[int] = set()

        def term_new() -> None:
            fresh = [p for p in self.pids() if p not in seen]
            seen.update(fresh)
            for pid in term_targets(fresh):
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass

        term_new()
        end = time.monotonic() + grace_seconds
        while self.populated() and time.monotonic() < end:
            reap()
            term_new()
            time.sleep(0.05)
        if self.populated():
            seen.update(self.pids())
            self.kill()
            self.wait_empty(kill_wait, reap)
        reap()
        return len(seen)

    def kill_and_remove(self, reap=lambda: None) -> int:
        """For an earlier attempt's cgroup: kill what lives in it, wait, remove it; how many there were."""
        n = len(self.pids())
        if self.populated():
            self.kill()
            self.wait_empty(10, reap)
        self.remove()
        return n


__all__ = ["ENTER_FAILED_EXIT", "TrialCgroup", "cgroup_problem", "own_cgroup", "trial_cgroup_name"]
