"""Stopping a child's whole process group: the one way ptbench does it.

Every helper process ptbench starts for a bounded job (an evaluation, a check, a judge's CLI, a
sandboxed run, a tool-server replica) leads its own session (`start_new_session=True`), so its pid is
also its process group's id and one signal reaches everything it started that stayed in the group.
The group is signalled even after the leader exited: its children may still be running (a pid that
still names a group is never reused by the kernel).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Sequence


def signal_group(pgid: int, sig: int) -> bool:
    """Send `sig` to the process group `pgid`; False if no process of it is left (or none may be signalled)."""
    try:
        os.killpg(pgid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def stop_groups(procs: Sequence[subprocess.Popen], *, grace_s: float = 0.0) -> None:
    """Stop each process's group and reap the processes.

    With `grace_s` > 0: SIGTERM (and SIGCONT, so a stopped group sees it) to the groups whose leader
    still runs, up to `grace_s` for the leaders to exit; then SIGKILL every group, whatever remains.
    """
    if grace_s > 0:
        running = [p for p in procs if p.poll() is None]
        for p in running:
            signal_group(p.pid, signal.SIGTERM)
            signal_group(p.pid, signal.SIGCONT)
        deadline = time.monotonic() + grace_s
        for p in running:
            try:
                p.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
    for p in procs:
        signal_group(p.pid, signal.SIGKILL)
    for p in procs:
        p.wait()


def stop_group(proc: subprocess.Popen, *, grace_s: float = 0.0) -> int:
    """`stop_groups` of one process; its exit status."""
    stop_groups([proc], grace_s=grace_s)
    return int(proc.returncode)
