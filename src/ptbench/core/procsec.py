"""Process hardening for processes that hold secrets (the runner and its gateway).

A non-dumpable process's /proc/PID/environ, mem, maps and fds are owned by root and closed to
ptrace-read access: another process of the same uid (an agent under `sandbox: none`) can no longer
read the keys the job inherited. (Root, or a process with CAP_SYS_PTRACE, still can: run
agents sandboxed, or as another user, where that matters.) Reset by execve, so each process that
holds a secret calls it itself.
"""

from __future__ import annotations

from ptbench.core import prctl


def make_not_dumpable() -> bool:
    """PR_SET_DUMPABLE 0 for this process; True if it took effect (Linux)."""
    return prctl.set_dumpable(False)


def is_dumpable() -> bool:
    return prctl.is_dumpable()
