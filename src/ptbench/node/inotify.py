"""Linux inotify through libc (no package): watch folders, read their events in bulk.

One `Inotify` is one kernel instance; `read()` returns whatever events are queued (blocking up to
a timeout). The kernel's queue is bounded (fs.inotify.max_queued_events); when it overflows it says
so with one `Q_OVERFLOW` event, which a reader must treat as "events were lost".
"""

from __future__ import annotations

import ctypes
import os
import select
import struct
from dataclasses import dataclass

MODIFY, CLOSE_WRITE, MOVED_FROM, MOVED_TO = 0x2, 0x8, 0x40, 0x80
CREATE, DELETE, DELETE_SELF, MOVE_SELF = 0x100, 0x200, 0x400, 0x800
Q_OVERFLOW, IGNORED, ONLYDIR, DONT_FOLLOW, ISDIR = 0x4000, 0x8000, 0x01000000, 0x02000000, 0x40000000
_NONBLOCK, _CLOEXEC = os.O_NONBLOCK, 0o2000000
_HEADER = struct.Struct("iIII")


@dataclass(frozen=True)
class Event:
    wd: int
    mask: int
    cookie: int
    name: str

    def __contains__(self, flag: int) -> bool:
        return bool(self.mask & flag)


class Inotify:
    def __init__(self) -> None:
        self._libc = ctypes.CDLL(None, use_errno=True)
        fd = self._libc.inotify_init1(_NONBLOCK | _CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), f"inotify_init1: {os.strerror(ctypes.get_errno())}")
        self.fd = fd

    def add_watch(self, path: str, mask: int) -> int:
        """The watch descriptor; OSError (ENOSPC: fs.inotify.max_user_watches reached) on failure."""
        wd = self._libc.inotify_add_watch(self.fd, os.fsencode(path), ctypes.c_uint32(mask))
        if wd < 0:
            err = ctypes.get_errno()
            raise OSError(err, f"inotify_add_watch {path}: {os.strerror(err)}")
        return int(wd)

    def rm_watch(self, wd: int) -> None:
        self._libc.inotify_rm_watch(self.fd, wd)

    def read(self, timeout: float | None, wake_fd: int | None = None) -> list[Event]:
        """Queued events, waiting up to `timeout` seconds for the first (or until `wake_fd` is readable)."""
        fds = [self.fd] + ([wake_fd] if wake_fd is not None else [])
        if timeout is None or timeout > 0:
            ready, _, _ = select.select(fds, [], [], timeout)
            if self.fd not in ready:
                return []
        out: list[Event] = []
        while True:
            try:
                buf = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                return out
            out += parse(buf)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def parse(buf: bytes) -> list[Event]:
    out, pos = [], 0
    while pos + _HEADER.size <= len(buf):
        wd, mask, cookie, size = _HEADER.unpack_from(buf, pos)
        pos += _HEADER.size
        name = os.fsdecode(buf[pos : pos + size].rstrip(b"\0"))
        pos += size
        out.append(Event(wd, mask, cookie, name))
    return out
