"""File locks (flock) for the few places where two processes must not work at once: a trial's
runner against anyone recording for it, and read-modify-writes of a campaign's job tables."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ptbench.core.errors import UserError


@contextmanager
def file_lock(path: str | os.PathLike[str], *, wait: bool = True) -> Iterator[bool]:
    """Hold an exclusive lock on `path` (created if missing) while the block runs.

    With `wait=False` the block gets False, holding nothing, when someone else has the lock.
    A filesystem without flock support is a user error naming the fix, not a traceback."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        except OSError as exc:  # e.g. Lustre mounted without `flock`, NFS without a lock daemon
            raise UserError(
                f"{path.parent}: cannot lock files on this filesystem ({exc.strerror}); put results_dir on a "
                "filesystem with flock support (Lustre: mount with -o flock)"
            ) from None
        yield True
    finally:
        os.close(fd)
