"""Process hardening for processes that hold secrets (the runner and its gateway).

A non-dumpable process's /proc/PID/environ, mem, maps and fds are owned by root and closed to
ptrace-read access: another process of the same uid (an agent under `sandbox: none`) can no longer
read the keys the job inherited. (Root, or a process with CAP_SYS_PTRACE, still can: run
agents sandboxed, or as another user, where that matters.) Reset by execve, so each process that
holds a secret calls it itself.
"""

from __future__ import annotations

import ctypes

_PR_GET_DUMPABLE = 3
_PR_SET_DUMPABLE = 4


def _prctl(option: int, arg: int = 0) -> int:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, arg, 0, 0, 0))
    except (OSError, AttributeError):
        return -1


def make_not_dumpable() -> bool:
    """PR_SET_DUMPABLE 0 for this process; True if it took effect (Linux)."""
    return _prctl(_PR_SET_DUMPABLE, 0) == 0 and _prctl(_PR_GET_DUMPABLE) == 0


def is_dumpable() -> bool:
    return _prctl(_PR_GET_DUMPABLE) != 0
