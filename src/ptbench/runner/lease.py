"""The runner's lease on its trial: how a busy trial lock is told apart from a dead node's.

The trial lock is an flock on a shared filesystem. When a node dies, its runner's lock can outlive
it until the file server notices (an NFS lease, a Lustre eviction: minutes); a requeued job then
finds the trial locked. Beside the lock the runner keeps `runner.lease` (pid, host, renewed_at,
ttl) renewed by a thread every ttl/3. A runner that finds the lock taken exits 75 (retry later) in
either case: with the holder's lease live, another runner really works on the trial; with it
expired, the holder is gone and its lock will be released; the message says which.
PTBENCH_LEASE_SECONDS sets the ttl (default 120).
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time

from ptbench.core.files import atomic_write_json
from ptbench.trial import TrialDir

LEASE_FILE = "runner.lease"
DEFAULT_TTL = 120.0


def lease_ttl() -> float:
    try:
        return max(1.0, float(os.environ.get("PTBENCH_LEASE_SECONDS", DEFAULT_TTL)))
    except ValueError:
        return DEFAULT_TTL


class Lease:
    """Written now, renewed every ttl/3 from a daemon thread until `release()`."""

    def __init__(self, trial: TrialDir, ttl: float | None = None) -> None:
        self.path = trial.path / LEASE_FILE
        self.ttl = ttl or lease_ttl()
        self._stop = threading.Event()
        self._renew()
        self._thread = threading.Thread(target=self._loop, name="trial-lease", daemon=True)
        self._thread.start()

    def _renew(self) -> None:
        try:
            atomic_write_json(
                self.path,
                {"pid": os.getpid(), "host": socket.gethostname(), "renewed_at": time.time(), "ttl": self.ttl},
            )
        except OSError:
            pass  # a full disk: the lease looks older; the lock itself still protects the trial

    def _loop(self) -> None:
        while not self._stop.wait(self.ttl / 3):
            self._renew()

    def release(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.path.unlink(missing_ok=True)


def busy_message(trial: TrialDir) -> str:
    """Why the trial's lock is taken, from the holder's lease, for the one line a busy runner prints."""
    try:
        lease = json.loads((trial.path / LEASE_FILE).read_text())
        age = time.time() - float(lease["renewed_at"])
        holder = f"pid {lease['pid']} on {lease['host']}"
        ttl = float(lease.get("ttl", DEFAULT_TTL))
    except (OSError, ValueError, KeyError, TypeError):
        return (
            f"{trial.path}: the trial is locked and its holder left no lease; retry later (exit 75: a scheduler "
            "requeues; the lock goes with its holder)"
        )
    if age <= ttl:
        return (
            f"{trial.path}: another runner ({holder}, lease renewed {age:.0f} s ago) is working on this trial; "
            "retry after it ends (exit 75)"
        )
    return (
        f"{trial.path}: the trial's lock is still held but its runner ({holder}) let its lease expire {age - ttl:.0f} "
        "s ago (its node probably died); the filesystem releases such a lock once it notices; retry later (exit 75)"
    )
