"""prctl(2), the one wrapper: the few process attributes ptbench sets on Linux.

- child subreaper (PR_SET/GET_CHILD_SUBREAPER): orphaned descendants are re-parented to us, so a
  deadline can find and stop every process of an agent, even a double-forked one;
- parent-death signal (PR_SET_PDEATHSIG): a child dies with the process that started it, even one
  SIGKILLed (call it in the child: `preexec_fn`, a pool's initializer);
- dumpable (PR_SET/GET_DUMPABLE): a non-dumpable process's /proc/PID/environ and memory are closed to
  other processes of the same uid (see `procsec`).

Each call says whether the kernel took it (False off Linux, or where libc has no prctl).
"""

from __future__ import annotations

import ctypes

PR_SET_PDEATHSIG = 1
PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37


def prctl(option: int, arg2: object = 0) -> int:
    """The raw call (`arg2` an int or a `ctypes.byref`); -1 where there is no prctl (not Linux)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, arg2, 0, 0, 0))
    except (OSError, AttributeError):
        return -1


def _get_int(option: int) -> int | None:
    flag = ctypes.c_int(0)
    return flag.value if prctl(option, ctypes.byref(flag)) == 0 else None


def set_child_subreaper(on: bool = True) -> bool:
    """Adopt (or stop adopting) orphaned descendants (Linux >= 3.4); True only if the kernel says it took."""
    return prctl(PR_SET_CHILD_SUBREAPER, 1 if on else 0) == 0 and is_child_subreaper() == on


def is_child_subreaper() -> bool:
    return _get_int(PR_GET_CHILD_SUBREAPER) == 1


def set_parent_death_signal(sig: int) -> bool:
    """This process gets `sig` when the thread that forked it dies."""
    return prctl(PR_SET_PDEATHSIG, int(sig)) == 0


def set_dumpable(on: bool) -> bool:
    return prctl(PR_SET_DUMPABLE, 1 if on else 0) == 0 and is_dumpable() == on


def is_dumpable() -> bool:
    return prctl(PR_GET_DUMPABLE) != 0
