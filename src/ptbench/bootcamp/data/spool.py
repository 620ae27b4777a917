"""Candidate cases on disk, and the dedup that picks among them, without holding rows in memory.

A *chunk* is the candidates k0 <= k < k1 of one (split, level): one file of canonical identity
JSON lines (`<name>.jsonl`) and, written after it, the line offsets and a 64-bit hash of each
case's dedup key (`<name>.npz`, the chunk's completion marker). Chunks are written atomically, so a
killed run leaves whole chunks or none, and the next run makes only the missing ones.

Distinctness is kept by the 64-bit hashes (8 bytes a case, in sorted runs), never by the rows: two
different keys collide with probability about n²/2⁶⁵ (3·10⁻⁶ for 10 million cases), and a collision
only drops one case that was in fact new, which the run then replaces by the next distinct one.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ptbench.bootcamp.api import canonical_json
from ptbench.core.files import atomic_write_bytes

if TYPE_CHECKING:
    import numpy as np

    from ptbench.bootcamp.environment import Environment

CHUNK = 50_000  # candidates per chunk file
PART = 10_000  # rows per part of the output: one Parquet row group (rowschema.PARQUET_ROW_GROUP), ~40 MB of rows


def key_hash(key: str) -> bytes:
    """A dedup key's 64-bit hash, as the 8 bytes stored in a chunk's index (read as little-endian uint64)."""
    return hashlib.blake2b(key.encode(), digest_size=8).digest()


_FLAT_JSON = (str, int, float)


def as_stored(identity: dict[str, Any], text: str) -> dict[str, Any]:
    """The identity as JSON gives it back (what every later reader of the chunk sees: tuples become
    lists, keys strings): `json.loads(text)`, skipped when that would return `identity` itself: a
    dict of str keys and str, int or finite float values (bool and subclasses take the slow way)."""
    for key, value in identity.items():
        if type(key) is not str or type(value) not in _FLAT_JSON or (type(value) is float and not math.isfinite(value)):
            return json.loads(text)
    return identity


@dataclass(frozen=True)
class Chunk:
    split: str
    level: str
    level_index: int
    k0: int
    k1: int

    @property
    def name(self) -> str:
        return f"{self.split}.{self.level_index:03d}.{self.k0:012d}-{self.k1:012d}"


def make_chunk(env: Environment, chunk: Chunk, spool: Path) -> None:
    """Generate the chunk's candidates and write them (no-op when the chunk is already complete)."""
    import numpy as np

    if (spool / f"{chunk.name}.npz").is_file():
        return
    gen, seed = env.generators[chunk.level], env.config.seed
    lines: list[bytes] = []
    digests: list[bytes] = []
    rng, prefix = random.Random(), f"{seed}:{chunk.split}:{chunk.level}:"
    for k in range(chunk.k0, chunk.k1):
        rng.seed(f"{prefix}{k}")  # datagen.case_rng's state, in one reused object
        identity = gen.case(rng)
        text = canonical_json(identity)
        lines.append(text.encode() + b"\n")
        # the key of the value as stored, as every later reader sees it
        digests.append(key_hash(gen.dedup_key(as_stored(identity, text))))
    hashes = np.frombuffer(b"".join(digests), dtype="<u8").astype(np.uint64)
    offsets = np.zeros(len(lines) + 1, dtype=np.uint64)
    np.cumsum([len(b) for b in lines], out=offsets[1:])
    spool.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(spool / f"{chunk.name}.jsonl", b"".join(lines))
    buf = io.BytesIO()
    np.savez(buf, offsets=offsets, hashes=hashes)
    atomic_write_bytes(spool / f"{chunk.name}.npz", buf.getvalue())  # last: the chunk is complete


def load_index(spool: Path, chunk: Chunk) -> tuple[np.ndarray, np.ndarray]:
    import numpy as np

    with np.load(spool / f"{chunk.name}.npz") as z:
        return z["offsets"], z["hashes"]


class HashSet:
    """Sorted runs of 64-bit hashes; runs of similar size are merged (a log-structured set), up to
    MERGE_CAP hashes a run, so a merge's temporary copies stay a few tens of MB at any size."""

    MERGE_CAP = 1 << 21  # 16 MB a run; 10 million cases: about five full runs to search

    def __init__(self) -> None:
        self.runs: list[np.ndarray] = []

    def contains(self, h: np.ndarray) -> np.ndarray:
        import numpy as np

        found = np.zeros(len(h), dtype=bool)
        for run in self.runs:
            pos = np.searchsorted(run, h)
            found |= run[np.minimum(pos, len(run) - 1)] == h
        return found

    def add(self, h: np.ndarray) -> None:
        import numpy as np

        if not len(h):
            return
        self.runs.append(np.sort(h))
        while (
            len(self.runs) > 1
            and len(self.runs[-2]) <= 2 * len(self.runs[-1])
            and len(self.runs[-2]) + len(self.runs[-1]) <= self.MERGE_CAP
        ):
            b, a = self.runs.pop(), self.runs.pop()
            self.runs.append(np.sort(np.concatenate([a, b]), kind="stable"))  # two sorted runs: linear


def pick_dtype() -> np.dtype:
    """One chosen case on disk: its chunk, its line there, and the line's bytes (20 bytes, packed)."""
    import numpy as np

    return np.dtype([("chunk", "<u4"), ("line", "<u4"), ("start", "<u8"), ("length", "<u4")])


@dataclass
class Picks:
    """One split's chosen cases in pick order, as records in a file of the spool (`picks.<split>.bin`):
    the rows are then built from their byte ranges, and no process holds the picks in memory."""

    path: Path
    chunks: list[Chunk] = field(default_factory=list)
    n: int = 0

    def __len__(self) -> int:
        return self.n


class Reader:
    """Picked cases' records and identity lines, read with pread (no memory map: the pages a
    shuffled part touches would count in the process's memory until it ends)."""

    def __init__(self, spool: Path, picks: Picks) -> None:
        self.spool, self.picks = spool, picks
        self._fds: dict[int, int] = {}
        self._records = os.open(picks.path, os.O_RDONLY)

    def records(self, picks: Any) -> np.ndarray:
        """The records of these pick numbers, in this order."""
        import numpy as np

        dtype = pick_dtype()
        raw = b"".join(os.pread(self._records, dtype.itemsize, int(p) * dtype.itemsize) for p in picks)
        if len(raw) != len(picks) * dtype.itemsize:
            raise OSError(f"{self.picks.path}: short read (the spool changed during the run?)")
        return np.frombuffer(raw, dtype=dtype)

    def line(self, chunk: int, start: int, length: int) -> str:
        """The identity line of a record (its `chunk`, `start` and `length` fields, as ints)."""
        fd = self._fds.get(chunk)
        if fd is None:
            fd = self._fds[chunk] = os.open(self.spool / f"{self.picks.chunks[chunk].name}.jsonl", os.O_RDONLY)
        data = os.pread(fd, length, start)
        if len(data) != length:
            raise OSError(f"{self.picks.chunks[chunk].name}.jsonl: short read at byte {start}")
        return data.decode()

    def close(self) -> None:
        for fd in [*self._fds.values(), self._records]:
            os.close(fd)
        self._fds.clear()
