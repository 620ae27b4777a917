"""The test sets as a hash index, and the scan of one stream against it.

Each test item is split into segments (question, answer, context), each segment into n-grams of
normalised tokens; a segment shorter than n is one whole-segment key (questions only: a two-token
answer like "x 5" alone says nothing). An n-gram shared by two test items is template text (an
instruction, a few-shot example) and is dropped: it is evidence for no item in particular.

A segment counts as found in a stream when at least `min(MIN_HITS, its n-grams)` of its distinct
n-grams occur there: a question copied with any other answer is found on its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ptbench.integrity.contamination.ngrams import Hasher, normalize_text
from ptbench.integrity.contamination.sources import Stream

MIN_HITS = 3
SHORT_MIN_TOKENS = 2  # a one-token question ("7") is not evidence of anything
_BITMAP_BITS = 25


@dataclass
class Segment:
    item: int  # index into TestIndex.items
    role: str  # question | answer | context
    norm: bytes
    starts: np.ndarray  # token start offsets in norm


@dataclass
class TestIndex:
    n: int
    items: list[tuple[str, str]] = field(default_factory=list)  # (task, item id)
    segments: list[Segment] = field(default_factory=list)
    hashes: dict[int, np.ndarray] = field(default_factory=dict)  # window length -> sorted unique hashes
    seg_of: dict[int, np.ndarray] = field(default_factory=dict)  # window length -> segment of each hash
    pos_of: dict[int, np.ndarray] = field(default_factory=dict)  # window length -> token position in the segment
    kept: np.ndarray = field(
        default_factory=lambda: np.empty(0, np.int64)
    )  # n-grams per segment after dropping shared ones
    dropped_shared: int = 0

    def add_item(self, task: str, item_id: str, parts: list[tuple[str, str]]) -> None:
        self.items.append((task, item_id))
        for role, text in parts:
            if text and text.strip():
                norm = normalize_text(text)
                self.segments.append(Segment(len(self.items) - 1, role, norm, np.empty(0, np.int64)))

    def build(self) -> TestIndex:
        hasher = Hasher()
        per_len: dict[int, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
        for si, seg in enumerate(self.segments):
            th, seg.starts = hasher.tokens(seg.norm)
            k = min(self.n, th.size)
            if k < self.n and (seg.role != "question" or k < SHORT_MIN_TOKENS):
                continue
            w = Hasher.windows(th, k)
            w, pos = np.unique(w, return_index=True)
            per_len.setdefault(k, []).append((w, np.full(w.size, si, np.int64), pos.astype(np.int64)))
        item_of_seg = np.array([s.item for s in self.segments], np.int64)
        kept = np.zeros(len(self.segments), np.int64)
        for k, parts in per_len.items():
            h = np.concatenate([p[0] for p in parts])
            s = np.concatenate([p[1] for p in parts])
            pos = np.concatenate([p[2] for p in parts])
            order = np.lexsort((s, h))
            h, s, pos = h[order], s[order], pos[order]
            # A hash in more than one item is template text; the same hash twice in one item is one entry.
            items = item_of_seg[s]
            first = np.ones(h.size, bool)
            first[1:] = h[1:] != h[:-1]
            group = np.cumsum(first) - 1
            lo = np.minimum.reduceat(items, np.flatnonzero(first)) if h.size else items
            hi = np.maximum.reduceat(items, np.flatnonzero(first)) if h.size else items
            unique_item = (lo == hi)[group]
            keep = first & unique_item
            self.dropped_shared += int((first & ~unique_item).sum())
            self.hashes[k], self.seg_of[k], self.pos_of[k] = h[keep], s[keep], pos[keep]
            kept += np.bincount(s[keep], minlength=len(self.segments))
        self.kept = kept
        self._bitmap = np.zeros(1 << _BITMAP_BITS, bool)
        for h in self.hashes.values():
            self._bitmap[h >> np.uint64(64 - _BITMAP_BITS)] = True
        return self

    @property
    def size(self) -> int:
        return sum(h.size for h in self.hashes.values())

    def overlap_text(self, k: int, entry: int) -> str:
        seg = self.segments[int(self.seg_of[k][entry])]
        pos = int(self.pos_of[k][entry])
        start = int(seg.starts[pos])
        end = int(seg.starts[pos + k - 1]) if pos + k - 1 < seg.starts.size else len(seg.norm)
        tail = seg.norm[end:].split(b" ", 1)[0]
        return (seg.norm[start:end] + tail).decode(errors="replace")


@dataclass
class StreamHits:
    """What one stream matched: per segment, the distinct entries found and where the first one was."""

    label: str
    found: dict[int, int] = field(default_factory=dict)  # segment -> distinct entries matched
    where: dict[int, tuple[str, int, int]] = field(default_factory=dict)  # segment -> (location, k, entry)


def scan_stream(index: TestIndex, stream: Stream, hasher: Hasher) -> StreamHits:
    hits = StreamHits(stream.label)
    shift = np.uint64(64 - _BITMAP_BITS)
    carry = np.empty(0, np.uint64)  # the last tokens of the previous chunk: n-grams across chunk edges
    matched: dict[int, list[np.ndarray]] = {k: [] for k in index.hashes}
    max_k = max(index.hashes, default=0)
    for chunk in stream.chunks:
        th, starts = hasher.tokens(chunk.norm)
        toks = np.concatenate([carry, th]) if carry.size else th
        for k, table in index.hashes.items():
            w = Hasher.windows(toks, k)
            cand = np.flatnonzero(index._bitmap[w >> shift])
            if cand.size == 0 or table.size == 0:
                continue
            pos = np.searchsorted(table, w[cand])
            pos[pos >= table.size] = table.size - 1
            ok = table[pos] == w[cand]
            if not ok.any():
                continue
            entries, at = pos[ok], cand[ok] - carry.size
            matched[k].append(entries)
            segs, first = np.unique(index.seg_of[k][entries], return_index=True)
            for seg, i in zip(segs.tolist(), first.tolist(), strict=True):
                if seg not in hits.where:
                    a = int(at[i])
                    loc = chunk.locate(int(starts[max(a, 0)])) + ("" if a >= 0 else " (across a chunk edge)")
                    hits.where[seg] = (loc, k, int(entries[i]))
        carry = toks[-(max_k - 1) :] if max_k > 1 else np.empty(0, np.uint64)
    for k, parts in matched.items():
        if parts:
            entries = np.unique(np.concatenate(parts))
            counts = np.bincount(index.seg_of[k][entries], minlength=len(index.segments))
            for seg in np.flatnonzero(counts).tolist():
                hits.found[seg] = hits.found.get(seg, 0) + int(counts[seg])
    return hits


def contaminated_segments(index: TestIndex, hits: StreamHits) -> list[int]:
    return [seg for seg, n in hits.found.items() if n >= min(MIN_HITS, int(index.kept[seg]))]
