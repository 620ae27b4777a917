"""Where the run journal puts what it keeps: journal/objects/<sha256> and journal/records.jsonl.

One `JournalStore` per run of the agent, used by one thread at a time (the journal's worker, then
its closing). It decides what is kept: weights by content type (1 MiB or more, their whole layout
checked) are recorded, not copied; copies stop at the byte cap; everything else is copied once per distinct content.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ptbench.integrity.contamination.model_files import tensor_file
from ptbench.integrity.journal import OBJECTS, RECORDS, weight_kind

_IN_MEMORY = 8 << 20  # files up to this size are read whole, hashed, then written (if new)
WEIGHT_MIN = 1 << 20  # weights smaller than this are copied like anything else (cheap; could hold text)
Source = int | Path  # an open descriptor, or a hard link in pending/ (or the file's own path)


class JournalStore:
    def __init__(self, root: Path, max_bytes: int) -> None:
        self.root, self.objects, self.max_bytes = root, root / OBJECTS, max_bytes
        self.objects.mkdir(parents=True, exist_ok=True)
        self.bytes_kept = self.files_kept = self.skipped = self.missed_count = 0
        self.busy_s = 0.0
        self._fd = -1

    def copy(self, src: Source, label: str, inode: int) -> None:
        """Keep what `src` holds now (a descriptor is read from offset 0 and left open)."""
        started = time.monotonic()
        try:
            fd = src if isinstance(src, int) else _open(src)
        except OSError as exc:
            self.missed(label, f"could not be opened ({exc.strerror})", race=False)
            return
        try:
            st = os.fstat(fd)
            rec = {"t": time.time(), "label": label, "ino": inode, "size": st.st_size, "mtime_ns": st.st_mtime_ns}
            kind = weight_kind(os.pread(fd, 64, 0))
            # A weight file by its first bytes is skipped only when its whole layout checks out (header
            # reads only): a plausible header in front of test items is kept and scanned like any file.
            if kind and st.st_size >= WEIGHT_MIN and tensor_file(Path(f"/proc/self/fd/{fd}")) is not None:
                self.record({**rec, "kind": "skipped", "why": "weights", "format": kind})
                self.skipped += 1
                return
            if self.bytes_kept + st.st_size > self.max_bytes:
                self.record({**rec, "kind": "skipped", "why": "cap"})
                self.skipped += 1
                return
            sha, size = self._store(fd, st.st_size)
            self.bytes_kept += size
            self.files_kept += 1
            self.record({**rec, "kind": "kept", "sha256": sha, "size": size})
        finally:
            if not isinstance(src, int):
                os.close(fd)
            self.busy_s += time.monotonic() - started

    def _store(self, fd: int, size: int) -> tuple[str, int]:
        """Copy into objects/<sha256> (once per content): small files through memory, hashed before
        anything is written (a content kept already costs no write), large ones streamed."""
        tmp = str(self.objects / f".tmp-{threading.get_ident()}")
        offset = 0

        def read(n: int) -> bytes:
            nonlocal offset
            block = os.pread(fd, n, offset)  # from the start, whoever else reads this descriptor
            offset += len(block)
            return block

        h = hashlib.sha256()
        sha = ""
        if size <= _IN_MEMORY:
            data = b"".join(iter(lambda: read(size + 65536), b""))
            sha = hashlib.sha256(data).hexdigest()
            if (self.objects / sha).exists():
                return sha, len(data)
            blocks: Iterator[bytes] = iter([data])
        else:
            blocks = iter(lambda: read(4 << 20), b"")
        out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        written = 0
        try:
            for block in blocks:
                if not sha:
                    h.update(block)
                written += os.write(out, block)
        finally:
            os.close(out)
        sha = sha or h.hexdigest()
        os.replace(tmp, self.objects / sha)
        return sha, written

    def missed(self, label: str, why: str, *, race: bool = True) -> None:
        """A version the journal could not keep: lost to its reaction time (`race`), or not readable."""
        self.missed_count += 1
        self.record({"t": time.time(), "label": label, "kind": "missed", "why": why, "race": race})

    def record(self, rec: dict[str, Any]) -> None:
        if self._fd < 0:
            self._fd = os.open(self.root / RECORDS, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(self._fd, (json.dumps(rec) + "\n").encode())  # one write(2): a reader never sees half a line

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _open(path: Path) -> int:
    try:
        return os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except PermissionError:  # the agent made its file unreadable: it is ours to read all the same
        os.chmod(path, os.lstat(path).st_mode | 0o400, follow_symlinks=False)
        return os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
