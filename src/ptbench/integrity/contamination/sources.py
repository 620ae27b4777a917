"""Everything text-like the agent could have trained on, as streams of normalised chunks.

A stream is one file (or one string column of a table, or one archive member); its chunks are
cut at whitespace so no token is split, and each chunk can say where an offset lies in the
original (byte offset, row, member).
"""

from __future__ import annotations

import io
import os
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ptbench.integrity.contamination.ngrams import normalize_bytes, normalize_text

CHUNK = 8 << 20
_CUT_SLACK = 1 << 20  # look this far past a chunk end for whitespace to cut at
TABLE_EXT = (".parquet", ".arrow", ".feather")
ARCHIVE_EXT = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")
BINARY_EXT = {
    ".safetensors",
    ".bin",
    ".pt",
    ".pth",
    ".ckpt",
    ".gguf",
    ".onnx",
    ".npy",
    ".npz",
    ".so",
    ".pyc",
    ".png",
    ".jpg",
    ".jpeg",
    ".gif",
    ".pdf",
    ".whl",
    ".mp4",
    ".wav",
    ".msgpack",
    ".h5",
    ".lock",
    ".sqlite",
    ".db",
}
MAX_MEMBER = 2 << 30  # archive members bigger than this are noted, not read


@dataclass
class Chunk:
    norm: bytes
    exact: bool  # offsets in norm are byte offsets in the original
    locate: Callable[[int], str]


class _Reads(Protocol):
    """A binary file open for reading (a file, a gzip member, a `_Prefixed`)."""

    def read(self, n: int = -1, /) -> bytes: ...


@dataclass
class Stream:
    label: str  # e.g. workspace/data/x.jsonl, workspace/d.parquet[question], data.zip!a/b.jsonl
    chunks: Iterator[Chunk]


def kind_of(path: Path) -> str | None:
    name = path.name.lower()
    if name.endswith(TABLE_EXT):
        return "table"
    if name.endswith(ARCHIVE_EXT):
        return "archive"
    if name.endswith(".gz"):
        return "gzip"
    if path.suffix.lower() in BINARY_EXT:
        return None
    return "text"


def streams_of(path: Path, label: str, notes: list[str]) -> Iterator[Stream]:
    kind = kind_of(path)
    if kind == "table":
        yield from _table_streams(path, label, notes)
    elif kind == "archive":
        yield from _archive_streams(path, label, notes)
    elif kind == "gzip":
        import gzip

        with gzip.open(path, "rb") as fh:
            head = fh.read(8192)
            if _looks_text(head):
                yield Stream(label, _raw_chunks(_Prefixed(head, fh), label))
    elif kind == "text":
        with open(path, "rb") as fh:
            if _looks_text(fh.read(8192)):
                fh.seek(0)
                yield Stream(label, _raw_chunks(fh, label))


def _looks_text(head: bytes) -> bool:
    return b"\0" not in head


def _raw_chunks(fh: _Reads, label: str) -> Iterator[Chunk]:
    base = 0
    pending = b""
    while True:
        data = pending + fh.read(CHUNK)
        pending = b""
        if not data:
            return
        more = fh.read(_CUT_SLACK) if len(data) >= CHUNK else b""
        if more:
            found = [x for x in (more.find(b" "), more.find(b"\n")) if x >= 0]
            cut = min(found) if found else len(more)
            data, pending = data + more[:cut], more[cut:]
        norm, exact = normalize_bytes(data)

        def byte_at(off: int, s: int = base, e: bool = exact) -> str:
            return f"byte {s + off}" if e else f"near byte {s + off}"

        yield Chunk(norm, exact, byte_at)
        base += len(data)


def _table_streams(path: Path, label: str, notes: list[str]) -> Iterator[Stream]:
    import pyarrow as pa
    import pyarrow.ipc
    import pyarrow.parquet as pq

    if path.suffix.lower() == ".parquet":
        pf = pq.ParquetFile(path)
        columns = [f.name for f in pf.schema_arrow if _has_strings(f.type)]
        for col in columns:
            batches = (b.column(0) for b in pf.iter_batches(batch_size=65536, columns=[col]))
            yield Stream(f"{label}[{col}]", _column_chunks(batches))
        return
    try:
        reader = pa.ipc.open_file(path)
        table = reader.read_all()
    except pa.ArrowInvalid:
        with open(path, "rb") as fh:
            table = pa.ipc.open_stream(fh).read_all()  # HF datasets' cache files are IPC streams
    for f in table.schema:
        if _has_strings(f.type):
            yield Stream(f"{label}[{f.name}]", _column_chunks(c for c in table.column(f.name).chunks))


def _has_strings(t) -> bool:
    import pyarrow as pa

    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return True
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _has_strings(t.value_type)
    if pa.types.is_struct(t):
        return any(_has_strings(t.field(i).type) for i in range(t.num_fields))
    return False


def _column_chunks(arrays) -> Iterator[Chunk]:
    import bisect

    first_row = 0
    for arr in arrays:
        values = [_flatten(v) for v in arr.to_pylist()]
        parts = [normalize_text(v) for v in values]  # per value: offsets map to rows exactly
        starts, pos = [], 0
        for p in parts:
            starts.append(pos)
            pos += len(p) + 1
        norm = b" ".join(parts)

        def row_at(off: int, s: list[int] = starts, r: int = first_row) -> str:
            return f"row {r + bisect.bisect_right(s, off) - 1}"

        yield Chunk(norm, True, row_at)
        first_row += len(values)


def _flatten(v) -> str:
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if isinstance(v, dict):
        return "\n".join(_flatten(x) for x in v.values())
    if isinstance(v, (list, tuple)):
        return "\n".join(_flatten(x) for x in v)
    return str(v)


def _archive_streams(path: Path, label: str, notes: list[str]) -> Iterator[Stream]:
    if path.name.lower().endswith(".zip"):
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                if info.is_dir():
                    continue
                if info.file_size > MAX_MEMBER:
                    notes.append(f"{label}!{info.filename}: {info.file_size} bytes, not read")
                    continue
                yield from _member_streams(info.filename, lambda i=info: zf.open(i), label, notes)
        return
    with tarfile.open(path, "r:*") as tf:
        for member in tf:
            if not member.isfile():
                continue
            if member.size > MAX_MEMBER:
                notes.append(f"{label}!{member.name}: {member.size} bytes, not read")
                continue
            yield from _member_streams(member.name, lambda m=member: tf.extractfile(m), label, notes)


def _member_streams(name: str, opener, label: str, notes: list[str]) -> Iterator[Stream]:
    import tempfile

    sub = Path(name)
    kind = kind_of(sub)
    mlabel = f"{label}!{name}"
    if kind == "text":
        with opener() as fh:
            head = fh.read(8192)
            if _looks_text(head):
                yield Stream(mlabel, _raw_chunks(_Prefixed(head, fh), mlabel))
    elif kind in ("table", "archive", "gzip"):
        # Nested containers need a real file (Parquet footers, zip directories): extract to a temp file.
        with opener() as fh, tempfile.NamedTemporaryFile(suffix="".join(sub.suffixes[-2:])) as tmp:
            while block := fh.read(CHUNK):
                tmp.write(block)
            tmp.flush()
            yield from streams_of(Path(tmp.name), mlabel, notes)


class _Prefixed(io.RawIOBase):
    """A stream that first returns bytes already read, then the rest of another stream."""

    def __init__(self, head: bytes, rest) -> None:
        self._head, self._rest = head, rest

    def read(self, n: int = -1, /) -> bytes:
        if self._head:
            out, self._head = self._head[:n] if n >= 0 else self._head, self._head[n:] if n >= 0 else b""
            if n < 0 or len(out) < n:
                out += self._rest.read(-1 if n < 0 else n - len(out))
            return out
        return self._rest.read(n)


def walk_files(root: Path, skip: Callable[[Path], bool]) -> Iterator[Path]:
    """Files under root, following links to files and folders, each real file once."""
    seen: set[str] = set()
    for dirpath, dirs, files in os.walk(root, followlinks=True):
        real = os.path.realpath(dirpath)
        if real in seen:
            dirs[:] = []
            continue
        seen.add(real)
        dirs[:] = sorted(d for d in dirs if not skip(Path(dirpath) / d))
        for f in sorted(files):
            p = Path(dirpath) / f
            if not skip(p) and p.is_file():
                yield p
