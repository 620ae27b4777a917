"""Scanning many files on several cores: the test index is shared with worker processes (forked,
so its arrays are not copied), and a large text file is cut into ranges scanned in parallel.

A range is cut where a chunk of a stream would be (never inside a token, blob or escape) and
starts with up to `OVERLAP` bytes of the range before it, so an n-gram across the cut is found;
what the overlap matches twice counts once (matches are sets of index entries).
"""

from __future__ import annotations

import io
import multiprocessing as mp
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ptbench.integrity.contamination.decode import Budget
from ptbench.integrity.contamination.index import StreamHits, TestIndex, scan_stream
from ptbench.integrity.contamination.ngrams import Hasher
from ptbench.integrity.contamination.sources import (
    CHUNK,
    CUT_CONTEXT,
    Stream,
    cut_point,
    kind_of,
    raw_chunks,
    read_to_cut,
    sniff,
    streams_of,
)

OVERLAP = 256 << 10  # bytes of the previous range read again (n-grams across the cut)
RANGE = 16 * CHUNK  # bytes of a large text file per parallel job
_POOL_MIN_BYTES = 32 << 20  # less than this is scanned in the calling process


@dataclass
class FileScan:
    """Everything found in one file (its streams and what was decoded out of them)."""

    label: str
    path: Path
    hits: list[StreamHits] = field(default_factory=list)
    cut: list[str] = field(default_factory=list)  # what a decoding bound stopped
    notes: list[str] = field(default_factory=list)
    error: str | None = None  # the file could not be read


_INDEX: TestIndex | None = None


def _init(index: TestIndex | None) -> None:
    global _INDEX
    if index is not None:
        _INDEX = index


def default_workers() -> int:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(4, cores))


def scan_files(index: TestIndex, targets: list[tuple[str, Path]], workers: int | None = None) -> Iterator[FileScan]:
    """FileScan of each (label, path), in order."""
    workers = default_workers() if workers is None else workers
    jobs: list[tuple] = []
    total = 0
    for i, (label, path) in enumerate(targets):
        try:
            size = path.stat().st_size
        except OSError as exc:
            jobs.append(("error", i, f"{type(exc).__name__}: {exc}"))
            continue
        total += size
        if size > RANGE and kind_of(path) == "text" and sniff(path) is None:
            jobs += [("range", i, label, str(path), a, min(a + RANGE, size), size) for a in range(0, size, RANGE)]
        else:
            jobs.append(("file", i, label, str(path)))
    if workers <= 1 or total < _POOL_MIN_BYTES or len(jobs) < 2:
        _init(index)
        results: Iterator = map(_job, jobs)
        yield from _collect(index, targets, results)
        return
    # fork shares the index without a copy; a process with threads forks unsafely: then spawn.
    ctx = mp.get_context("fork" if threading.active_count() == 1 else "spawn")
    try:
        pool = ctx.Pool(workers, initializer=_init, initargs=(index,))
    except (AssertionError, OSError):  # a daemonic process, or no processes left: the same scan, here
        _init(index)
        yield from _collect(index, targets, map(_job, jobs))
        return
    with pool:
        yield from _collect(index, targets, pool.imap(_job, jobs, chunksize=1))


def _collect(index: TestIndex, targets: list[tuple[str, Path]], results: Iterator) -> Iterator[FileScan]:
    current: FileScan | None = None
    merged: StreamHits | None = None
    current_i = -1
    for i, kind, payload in results:
        if current is not None and i != current_i:
            yield _done(index, current, merged)
            current, merged = None, None
        if current is None:
            current_i = i
            current = FileScan(*targets[i])
        hits, cut, notes, error = payload
        current.cut += cut
        current.notes += notes
        current.error = current.error or error
        if kind == "range" and hits:
            if merged is None:
                merged = hits[0]
            else:
                merged.merge(hits[0])
        else:
            current.hits += hits
    if current is not None:
        yield _done(index, current, merged)


def _done(index: TestIndex, scan: FileScan, merged: StreamHits | None) -> FileScan:
    if merged is not None:
        scan.hits.insert(0, merged.finish(index))
    return scan


def _job(job: tuple) -> tuple[int, str, tuple]:
    kind, i = job[0], job[1]
    if kind == "error":
        return i, kind, ([], [], [], job[2])
    assert _INDEX is not None
    budget, notes = Budget(), list[str]()
    try:
        if kind == "file":
            _, _, label, path = job
            hits = [scan_stream(_INDEX, s, Hasher(), budget) for s in streams_of(Path(path), label, notes)]
        else:
            _, _, label, path, a, b, size = job
            hits = [_scan_range(_INDEX, label, path, a, b, size, budget)]
    except Exception as exc:  # noqa: BLE001  (an unreadable file is not a clean file, whatever the error)
        return i, kind, ([], budget.cut, notes, f"{type(exc).__name__}: {exc}")
    return i, kind, (hits, budget.cut, notes, None)


def _cut_after(fh, at: int, size: int) -> int:
    """Where a range that nominally ends at `at` really ends (same answer for the range after it)."""
    if at <= 0 or at >= size:
        return min(max(at, 0), size)
    fh.seek(max(0, at - CUT_CONTEXT))
    prev = fh.read(at - max(0, at - CUT_CONTEXT))
    body, _ = read_to_cut(fh, prev)
    return at + len(body)


def _scan_range(index: TestIndex, label: str, path: str, a: int, b: int, size: int, budget: Budget) -> StreamHits:
    """Unfinished hits of bytes [a, b) of a text file (the caller merges the ranges, then finishes)."""
    with open(path, "rb") as fh:
        start, end = _cut_after(fh, a, size), _cut_after(fh, b, size)
        lead_from = max(0, start - OVERLAP)
        fh.seek(lead_from)
        data = fh.read(end - lead_from)
    if lead_from > 0:  # the overlap starts where a chunk could: no token is cut in half
        at = cut_point(data[: start - lead_from]) or (start - lead_from)
        data, lead_from = data[at:], lead_from + at
    chunks = raw_chunks(io.BytesIO(data), label, CHUNK, base=lead_from)
    # the overlap's blobs are the previous range's (a cut never falls inside a blob)
    return scan_stream(index, Stream(label, chunks), Hasher(), budget, finish=False, blobs_from=start)
