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

from ptbench.integrity.contamination import ngrams
from ptbench.integrity.contamination.decode import Budget, Piece, pieces_in
from ptbench.integrity.contamination.ngrams import Hasher, normalize_bytes, normalize_text
from ptbench.integrity.contamination.sources import Chunk, Stream

MIN_HITS = 3
SHORT_MIN_TOKENS = 2  # a one-token question ("7") is not evidence of anything
# A line of a longer question (the question of a templated prompt, one turn of a conversation) shorter
# than n has no n-gram of its own: every window that holds it holds template text too, so the line
# copied without its template matched nothing. Such a line ("question line") is keyed by all its
# windows of LINE_TOKENS and counts as found only when every one of them is in the stream (the whole
# line, not a phrase of it) and none of them is shared with another item (a line that overlaps another
# item's is template, as shared n-grams are). One window length for every line: each length is one
# more pass over every stream. Shorter lines are option labels ("b oxygen") and stock phrases, whose
# whole text an honest file may hold.
LINE_TOKENS = 6
_BITMAP_BITS = 25
_HI_SHIFT = np.uint64(64 - _BITMAP_BITS)
_LO_MASK = np.uint64((1 << _BITMAP_BITS) - 1)


@dataclass
class Segment:
    item: int  # index into TestIndex.items
    role: str  # question | question line | answer | context
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
    windows: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))  # distinct n-grams per segment

    def add_item(self, task: str, item_id: str, parts: list[tuple[str, str]]) -> None:
        self.items.append((task, item_id))
        for role, text in parts:
            if text and text.strip():
                norm = normalize_text(text)
                self.segments.append(Segment(len(self.items) - 1, role, norm, np.empty(0, np.int64)))
            lines = [line for line in (text or "").splitlines() if line.strip()] if role == "question" else []
            if len(lines) > 1:
                for line in lines:
                    norm = normalize_text(line)
                    self.segments.append(Segment(len(self.items) - 1, "question line", norm, np.empty(0, np.int64)))

    def build(self) -> TestIndex:
        hasher = Hasher()
        per_len: dict[int, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
        windows = np.zeros(len(self.segments), np.int64)
        for si, seg in enumerate(self.segments):
            th, seg.starts = hasher.tokens(seg.norm)
            k = min(self.n, th.size)
            if seg.role == "question line":
                if not LINE_TOKENS <= th.size < self.n:  # a longer line's n-grams are its question's already
                    continue
                k = LINE_TOKENS
            elif k < self.n and (seg.role != "question" or k < SHORT_MIN_TOKENS):
                continue
            w = Hasher.windows(th, k)
            w, pos = np.unique(w, return_index=True)
            windows[si] = w.size
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
        self.windows = windows
        return self.build_bitmaps()

    def build_bitmaps(self) -> TestIndex:
        """The pre-filter of `candidates`, from `hashes`."""
        # Two bitmaps of 2**25 bits (4 MiB each: they stay in cache), on the high and the low bits of
        # a hash: a window whose bits are in both is looked up in the sorted table (few are).
        self._hi = np.zeros(1 << (_BITMAP_BITS - 3), np.uint8)
        self._lo = np.zeros(1 << (_BITMAP_BITS - 3), np.uint8)
        for h in self.hashes.values():
            for bits, i in ((self._hi, h >> _HI_SHIFT), (self._lo, h & _LO_MASK)):
                i = i.astype(np.intp)
                np.bitwise_or.at(bits, i >> 3, np.left_shift(1, i & 7).astype(np.uint8))
        return self

    def window_candidates(
        self, toks: np.ndarray, k: int, prefix: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(positions, hashes) of the windows of k tokens in `toks` that may be in the index (a
        superset of those that are). `prefix`: Hasher.prefix(toks), for the numpy path."""
        if ngrams.kernel is not None:
            return Hasher.window_candidates(toks, k, self._hi, self._lo, int(_HI_SHIFT), int(_LO_MASK))
        w = Hasher.windows(toks, k, prefix)
        cand = self.candidates(w)
        return cand, w[cand]

    def candidates(self, w: np.ndarray) -> np.ndarray:
        """Positions in `w` of windows that may be in the index (a superset of those that are)."""
        i = (w >> _HI_SHIFT).astype(np.intp)
        cand = np.flatnonzero((self._hi[i >> 3] >> (i & 7).astype(np.uint8)) & 1)
        if cand.size:
            j = (w[cand] & _LO_MASK).astype(np.intp)
            cand = cand[((self._lo[j >> 3] >> (j & 7).astype(np.uint8)) & 1).astype(bool)]
        return cand

    @property
    def size(self) -> int:
        return sum(h.size for h in self.hashes.values())

    def overlap_text(self, k: int, entry: int) -> str:
        seg = self.segments[int(self.seg_of[k][entry])]
        if seg.role == "question line":  # found only whole: the line is the overlap
            return seg.norm.decode(errors="replace").strip()
        pos = int(self.pos_of[k][entry])
        start = int(seg.starts[pos])
        end = int(seg.starts[pos + k - 1]) if pos + k - 1 < seg.starts.size else len(seg.norm)
        tail = seg.norm[end:].split(b" ", 1)[0]
        return (seg.norm[start:end] + tail).decode(errors="replace")


@dataclass
class StreamHits:
    """What one stream matched: per segment, the distinct entries found and where the first one was.

    `children` are the streams decoded out of this one (base64, gzip, archive members in text).
    """

    label: str
    found: dict[int, int] = field(default_factory=dict)  # segment -> distinct entries matched
    where: dict[int, tuple[str, int, int]] = field(default_factory=dict)  # segment -> (location, k, entry)
    children: list[StreamHits] = field(default_factory=list)
    matched: dict[int, list[np.ndarray]] = field(default_factory=dict)  # k -> entries matched, until finish()

    def add(self, index: TestIndex, toks: np.ndarray, starts: np.ndarray, lead: int, locate) -> None:
        """Match the windows of `toks`; its first `lead` tokens were seen before (the carry)."""
        prefix = Hasher.prefix(toks) if ngrams.kernel is None else None
        for k, table in index.hashes.items():
            cand, wc = index.window_candidates(toks, k, prefix)
            if cand.size == 0 or table.size == 0:
                continue
            pos = np.searchsorted(table, wc)
            pos[pos >= table.size] = table.size - 1
            ok = table[pos] == wc
            if not ok.any():
                continue
            entries, at = pos[ok], cand[ok] - lead
            self.matched.setdefault(k, []).append(entries)
            segs, first = np.unique(index.seg_of[k][entries], return_index=True)
            for seg, i in zip(segs.tolist(), first.tolist(), strict=True):
                if seg not in self.where:
                    a = int(at[i])
                    loc = locate(int(starts[max(a, 0)])) + ("" if a >= 0 else " (across a chunk edge)")
                    self.where[seg] = (loc, k, int(entries[i]))

    def merge(self, other: StreamHits) -> None:
        """Fold in the hits of a later part of the same stream (scanned elsewhere)."""
        for k, parts in other.matched.items():
            self.matched.setdefault(k, []).extend(parts)
        for seg, w in other.where.items():
            self.where.setdefault(seg, w)
        seen = {c.label for c in self.children}  # a blob in the overlap of two ranges is decoded by both
        self.children += [c for c in other.children if c.label not in seen]

    def finish(self, index: TestIndex) -> StreamHits:
        for k, parts in self.matched.items():
            if parts:
                entries = np.unique(np.concatenate(parts))
                counts = np.bincount(index.seg_of[k][entries], minlength=len(index.segments))
                for seg in np.flatnonzero(counts).tolist():
                    self.found[seg] = self.found.get(seg, 0) + int(counts[seg])
        self.matched = {}
        return self

    def flat(self) -> list[StreamHits]:
        """This stream and every stream decoded out of it."""
        out = [self]
        for c in self.children:
            out += c.flat()
        return out


def scan_stream(
    index: TestIndex,
    stream: Stream,
    hasher: Hasher,
    budget: Budget | None = None,
    depth: int = 0,
    *,
    finish: bool = True,
    blobs_from: int = 0,
) -> StreamHits:
    """Scan a stream, and (through `budget`) every blob decoded out of it, in `children`.
    Unfinished hits (`finish=False`) can be merged with those of the stream's other parts; blobs
    that start before `blobs_from` (a part another scan reads too) are left to that scan."""
    hits = StreamHits(stream.label)
    budget = budget if budget is not None else Budget()
    carry = np.empty(0, np.uint64)  # the last tokens of the previous chunk: n-grams across chunk edges
    max_k = max(index.hashes, default=0)
    for chunk in stream.chunks:
        th, starts, lengths = hasher.spans(chunk.norm)
        toks = np.concatenate([carry, th]) if carry.size else th
        hits.add(index, toks, starts, carry.size, chunk.locate)
        if chunk.raw is not None:
            raw_exact = chunk.exact if chunk.raw_exact is None else chunk.raw_exact
            skip = max(0, blobs_from - chunk.base)
            for piece in pieces_in(chunk.raw, starts, lengths, raw_exact, chunk.locate, budget, depth, skip):
                hits.children.append(scan_piece(index, piece, stream.label, hasher, budget))
        carry = toks[-(max_k - 1) :] if max_k > 1 else np.empty(0, np.uint64)
    return hits.finish(index) if finish else hits


def scan_piece(index: TestIndex, piece: Piece, label: str, hasher: Hasher, budget: Budget) -> StreamHits:
    """A decoded piece is a stream of its own, located by where it was found."""
    norm, exact = normalize_bytes(piece.data)
    where = piece.where
    chunk = Chunk(norm, exact, lambda off: f"{where}, byte {off}" if exact else f"{where}, near byte {off}", piece.data)
    return scan_stream(index, Stream(f"{label}@{where}", iter([chunk])), hasher, budget, piece.depth)


def contaminated_segments(index: TestIndex, hits: StreamHits) -> list[int]:
    found = [seg for seg, n in hits.found.items() if n >= _needed(index, seg)]
    # A line of a question found whole says nothing more: one piece of evidence per question.
    whole = {index.segments[seg].item for seg in found if index.segments[seg].role == "question"}
    return [
        seg for seg in found if index.segments[seg].role != "question line" or index.segments[seg].item not in whole
    ]


def _needed(index: TestIndex, seg: int) -> int:
    """Distinct n-grams of a segment a stream must hold for the segment to count as found."""
    kept = int(index.kept[seg])
    if index.segments[seg].role == "question line":
        # the whole line, and only a line none of whose windows another item shares
        return kept if kept == int(index.windows[seg]) else kept + 1
    return min(MIN_HITS, kept)
