"""Atomic file writes and small filesystem helpers.

Every file another process may read (state.json, result.json, job tables) is written to a
temporary file in the same folder and renamed over the target, so a reader never sees half a file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import BaseModel

_UMASK = os.umask(0)
os.umask(_UMASK)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, *, mode: int | None = None) -> None:
    with atomic_writer(path, mode=mode) as fh:
        fh.write(data)


@contextmanager
def atomic_writer(path: str | os.PathLike[str], *, mode: int | None = None) -> Iterator[BinaryIO]:
    """A binary file to stream into; it replaces `path` only when the block ends without an error.
    `mode`: its permissions (default: 0666 less the umask; mkstemp would leave 0600, and other users'
    tools, collators and schedulers, must read our files)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
        os.chmod(tmp, mode if mode is not None else 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def atomic_write_text(path: str | os.PathLike[str], text: str, *, mode: int | None = None) -> None:
    atomic_write_bytes(path, text.encode(), mode=mode)


def link_or_copy(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> bool:
    """Put the regular file `src` at `dst`: a hard link where the filesystem allows one (no bytes
    copied), else an atomic copy. A symlink (or anything but a regular file) is refused, not followed:
    returns False and leaves `dst` as it was, so a link planted in a trial folder cannot bring a file
    from elsewhere along."""
    import shutil
    import stat

    src, dst = Path(src), Path(dst)
    try:
        if not stat.S_ISREG(os.lstat(src).st_mode):
            return False
        fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return False
        opened = os.fstat(fh.fileno())
        tmp = dst.parent / f".{dst.name}.{os.getpid()}.link"
        try:
            os.link(src, tmp, follow_symlinks=False)
            linked = os.lstat(tmp)
            # the name may have been swapped since we opened it: keep the link only if it is what we opened
            if (linked.st_dev, linked.st_ino) == (opened.st_dev, opened.st_ino):
                os.replace(tmp, dst)
                return True
            os.unlink(tmp)
        except OSError:  # another filesystem, protected_hardlinks: copy instead
            tmp.unlink(missing_ok=True)
        with atomic_writer(dst) as out:  # the bytes of the file we opened
            shutil.copyfileobj(fh, out)
    return True


def atomic_write_json(path: str | os.PathLike[str], obj: Any) -> None:
    if isinstance(obj, BaseModel):
        text = obj.model_dump_json(indent=2)
    else:
        text = json.dumps(obj, indent=2, sort_keys=False, default=str)
    atomic_write_text(path, text + "\n")


def append_jsonl(path: str | os.PathLike[str], record: dict[str, Any]) -> None:
    """Append one JSON line with a single write(2) so concurrent appenders never interleave."""
    line = (json.dumps(record, default=str) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def read_jsonl(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read a JSONL file, ignoring a torn last line left by a killed writer."""
    out: list[dict[str, Any]] = []
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                line = line.strip()
                if not line:
                    continue
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
    except FileNotFoundError:
        pass
    return out


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of a file's bytes, read in 1 MiB blocks (any size, flat memory)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return h.hexdigest()


_UNSAFE_IN_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def slug(text: str) -> str:
    """`text` as one safe, lower-case path component (trial ids, campaign names from flags)."""
    return _UNSAFE_IN_NAME.sub("-", text).strip("-").lower() or "x"


def untrusted_file(path: Path) -> str | None:
    """None when `path` is a regular file (not a link) of this user that no one else can write;
    else why not ("missing" if absent). For a harness cache: the place keeps the agent out, this
    keeps other users out."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return "missing"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if st.st_uid != os.getuid():
        return f"owned by uid {st.st_uid}, not this user"
    if st.st_mode & 0o022:
        return f"writable by others (mode {stat.S_IMODE(st.st_mode):o})"
    return None
