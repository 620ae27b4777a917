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
from typing import Any, Protocol

import numpy as np

from ptbench.integrity.contamination.decode import MAX_DEPTH, container_of, utf16_of
from ptbench.integrity.contamination.ngrams import normalize_bytes, normalize_text

CHUNK = 1 << 20  # the arrays of a chunk stay in cache: larger chunks scan slower
MAX_SLACK = 64 << 20  # look this far past a chunk end for a place to cut (a blob longer than this is split)
# Where a chunk may be cut: not inside a token, a base64/hex blob or an escape.
_CUT = np.ones(256, bool)
_CUT[list(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-\\%")] = False
_CUT[128:] = False  # never inside a UTF-8 sequence
_BLOB_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-"
_WRAPPED = 60
CUT_CONTEXT = _WRAPPED + 4  # bytes before a place that decide whether a chunk may end there
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
    raw: bytes | None = None  # the text before normalisation, searched for encoded blobs
    raw_exact: bool | None = None  # offsets in norm are offsets in raw (None: same as `exact`)
    base: int = 0  # offset of raw in its stream


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
    if kind in ("text", None):  # a compressed file or an archive under any name is opened
        with open(path, "rb") as fh:
            sniffed = container_of(fh.read(512))
        if sniffed in ("zip", "tar"):
            kind = "archive"
        elif sniffed in ("gzip", "bz2", "xz"):
            kind = sniffed
    if kind == "table":
        yield from _table_streams(path, label, notes)
    elif kind == "archive":
        yield from _archive_streams(path, label, notes)
    elif kind in ("gzip", "bz2", "xz"):
        import bz2
        import gzip
        import lzma

        openers: dict[str, Callable[..., Any]] = {"gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open}
        with openers[kind](path, "rb") as fh:
            head = fh.read(8192)
            if _looks_text(head):
                yield Stream(label, raw_chunks(_Prefixed(head, fh), label))
            else:  # a compressed archive (or a compressed compressed file): opened from a temporary copy
                yield from _nested(_Prefixed(head, fh), label, notes)
    elif kind == "text":
        with open(path, "rb") as fh:
            head = fh.read(8192)
            fh.seek(0)
            if _looks_text(head):
                yield Stream(label, raw_chunks(fh, label))
            elif (codec := utf16_of(head)) is not None:  # text written as UTF-16: read as UTF-8
                yield Stream(f"{label} (utf-16)", raw_chunks(_Utf8Of(fh, codec), label))


def scannable(path: Path) -> bool:
    """Whether a file may hold text: by its name, or by its first bytes (gzip, zip, tar, ...)."""
    return kind_of(path) is not None or sniff(path) is not None


def sniff(path: Path) -> str | None:
    """What the first bytes of a file say it is (gzip, zip, tar, ...), whatever its name."""
    try:
        with open(path, "rb") as fh:
            return container_of(fh.read(512))
    except OSError:
        return None


def _nested(fh, label: str, notes: list[str]) -> Iterator[Stream]:
    import tempfile

    with tempfile.NamedTemporaryFile() as tmp:
        while block := fh.read(CHUNK):
            tmp.write(block)
        tmp.flush()
        if container_of(open(tmp.name, "rb").read(512)) is not None:
            yield from streams_of(Path(tmp.name), label, notes)


def _looks_text(head: bytes) -> bool:
    return b"\0" not in head


def cut_point(block: bytes, start: int = 1) -> int | None:
    """The first offset (>= start, >= 1) in `block` where a chunk may end: a byte in neither a token, a
    base64/hex blob nor an escape (\\n, %41), so that none is split across chunks. A line end
    after 60 or more blob characters is no place either: `base64` wraps its output in lines."""
    a = np.frombuffer(block, np.uint8)
    start = max(start, 1)
    found = np.flatnonzero(_CUT[a[start:]] & (a[start - 1 : -1] != 0x5C)) + start
    for at in range(0, found.size, 64):  # ordinary text: the first candidate
        for i in found[at : at + 64].tolist():
            if a[i] in (0x0A, 0x0D) and i >= _WRAPPED and not block[i - _WRAPPED : i].translate(None, _BLOB_BYTES):
                continue
            return i
    return None


def read_to_cut(fh: _Reads, prev: bytes, max_slack: int = MAX_SLACK) -> tuple[bytes, bytes]:
    """(bytes up to the next cut point, bytes read past it) from a stream whose previous bytes
    (up to CUT_CONTEXT of them) were `prev`; a run longer than `max_slack` is cut where the limit falls."""
    got = bytearray()
    step = 1 << 16
    while len(got) < max_slack:
        more = fh.read(min(step, max_slack - len(got)))
        if not more:
            break
        at = cut_point(prev + more, len(prev))
        if at is not None:
            at -= len(prev)
            return bytes(got + more[:at]), more[at:]
        got += more
        prev = bytes(got[-CUT_CONTEXT:])
        step *= 4
    return bytes(got), b""


def raw_chunks(fh: _Reads, label: str, size: int = CHUNK, base: int = 0) -> Iterator[Chunk]:
    pending = b""
    while True:
        data = pending + fh.read(size - len(pending)) if len(pending) < size else pending
        pending = b""
        if not data:
            return
        if len(data) >= size:
            more, pending = read_to_cut(fh, data[-CUT_CONTEXT:])
            data += more
        norm, exact = normalize_bytes(data)
        start = base

        def byte_at(off: int, s: int = start, e: bool = exact) -> str:
            return f"byte {s + off}" if e else f"near byte {s + off}"

        yield Chunk(norm, exact, byte_at, data, base=start)
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

        yield Chunk(norm, True, row_at, "\n".join(values).encode("utf-8", "surrogateescape"), False)
        first_row += len(values)


def _flatten(v) -> str:
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if isinstance(v, dict):  # keys kept, as in the same row written as JSON: adjacent numeric fields
        return "\n".join(f"{k}\n{_flatten(x)}" for k, x in v.items())  # are not one "8 56" item
    if isinstance(v, (list, tuple)):
        return "\n".join(_flatten(x) for x in v)
    return str(v)


def _archive_streams(path: Path, label: str, notes: list[str]) -> Iterator[Stream]:
    if path.name.lower().endswith(".zip") or sniff(path) == "zip":
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
    with opener() as fh:
        head = fh.read(8192)
        if kind in ("table", "archive", "gzip") or container_of(head):
            if mlabel.count("!") > MAX_DEPTH:
                notes.append(f"{mlabel}: archives nested deeper than {MAX_DEPTH}; not opened")
                return
            # Nested containers need a real file (Parquet footers, zip directories): extract to a temp file.
            with tempfile.NamedTemporaryFile(suffix="".join(sub.suffixes[-2:])) as tmp:
                tmp.write(head)
                while block := fh.read(CHUNK):
                    tmp.write(block)
                tmp.flush()
                yield from streams_of(Path(tmp.name), mlabel, notes)
        elif _looks_text(head):
            yield Stream(mlabel, raw_chunks(_Prefixed(head, fh), mlabel))
        elif (codec := utf16_of(head)) is not None:
            yield Stream(f"{mlabel} (utf-16)", raw_chunks(_Utf8Of(_Prefixed(head, fh), codec), mlabel))


class _Utf8Of:
    """A UTF-16 byte stream read as UTF-8 bytes (offsets are those of the UTF-8 text)."""

    def __init__(self, fh, codec: str) -> None:
        import codecs

        self._decoder = codecs.getincrementaldecoder(codec)(errors="replace")
        self._fh = fh

    def read(self, n: int = -1) -> bytes:
        block = self._fh.read(n if n < 0 else 2 * n)
        return self._decoder.decode(block, final=not block).encode("utf-8", "surrogateescape")


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


def transcript_stream(path: Path, label: str, problems: list[str]) -> Stream:
    """The agent model's side of a gateway transcript (record/transcript.jsonl): every reply's text,
    reasoning and tool-call arguments, located by call. What the agent sent (tool outputs, test
    questions it was allowed to look at) is not contamination and is not read. A reply the gateway
    could not record whole is named in `problems`."""
    import bisect
    import json

    def chunks() -> Iterator[Chunk]:
        parts: list[bytes] = []
        calls: list[str] = []
        size = 0

        def flush() -> Chunk:
            norms = [normalize_bytes(p)[0] for p in parts]  # tool arguments are JSON: escapes decoded
            s, pos = [], 0
            for n in norms:
                s.append(pos)
                pos += len(n) + 1
            c = list(calls)
            return Chunk(
                b" ".join(norms),
                True,
                lambda off: f"call {c[max(0, bisect.bisect_right(s, off) - 1)]}",
                b"\n".join(parts),
                False,
            )

        with open(path, "rb") as fh:
            for line in fh:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                # The judge route's replies (the agent's evaluate.sh grading its outputs) quote test
                # prompts by design: only the agent's own model is evidence.
                if not isinstance(rec, dict) or rec.get("dir") != "response" or rec.get("route") != "agent":
                    continue
                if rec.get("unrecorded") or rec.get("cut"):
                    problems.append(f"{label}: call {rec.get('call')}: {rec.get('unrecorded') or rec.get('cut')}")
                texts = [rec.get("text"), rec.get("reasoning"), rec.get("unparsed")]
                for call in rec.get("tool_calls") or []:
                    if isinstance(call, dict):
                        texts += [call.get("name"), call.get("arguments")]
                body = "\n".join(t if isinstance(t, str) else json.dumps(t) for t in texts if t)
                if not body:
                    continue
                data = body.encode("utf-8", "surrogateescape")
                calls.append(str(rec.get("call", "?")))
                parts.append(data)
                size += len(data) + 1
                if size >= CHUNK:
                    yield flush()
                    parts, calls, size = [], [], 0
        if parts:
            yield flush()

    return Stream(label, chunks())
