"""The scanner's compiled loops (`_kernel.c`) give the numpy code's hashes, bit for bit, on text
made to hit every edge: tokens of 1 to 40 bytes (the 8-byte head and tail reads overlap, meet,
or leave a gap), non-ASCII bytes, runs of spaces, a token at each end, and every window length an
index holds. Without the kernel the scan would be right and half as fast: in CI it must be built."""

from __future__ import annotations

import numpy as np
import pytest

from ptbench.integrity.contamination import index as index_module
from ptbench.integrity.contamination import ngrams
from ptbench.integrity.contamination.ngrams import Hasher, normalize_bytes
from tests.support import require


@pytest.fixture
def kernel():
    require(ngrams.kernel is not None, "the compiled scanner kernel is not built (pip install -e . with a C compiler)")
    return ngrams.kernel


def _text(rng: np.random.Generator, n_tokens: int) -> bytes:
    alphabet = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz0123456789", np.uint8)
    parts = []
    for _ in range(n_tokens):
        word = bytes(rng.choice(alphabet, size=int(rng.integers(1, 41))))
        if rng.random() < 0.1:
            word = word[: len(word) // 2] + "é漢".encode()[: int(rng.integers(1, 6))] + word[len(word) // 2 :]
        parts.append(word + b" " * int(rng.integers(1, 4)))
    return b"".join(parts).rstrip()


def _numpy_only(monkeypatch) -> None:
    monkeypatch.setattr(ngrams, "kernel", None)


@pytest.mark.parametrize("seed", range(6))
def test_token_spans_equal_the_numpy_code(kernel, seed: int) -> None:
    rng = np.random.default_rng(seed)
    norm = _text(rng, int(rng.integers(1, 3000)))
    if seed == 0:
        norm = b"x"  # one one-byte token
    padded = b" " * 8 + norm + b" " * 8
    got = Hasher().spans(norm)
    want = Hasher.spans_numpy(padded)
    assert got[0].size == want[0].size > 0
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("k", [1, 2, 3, 7, 13, 40])
def test_window_candidates_equal_the_numpy_code(kernel, monkeypatch, k: int) -> None:
    rng = np.random.default_rng(k)
    toks, _, _ = Hasher().spans(_text(rng, 5000))
    index = index_module.TestIndex(n=13)
    # the index holds every 3rd window of the stream (so both bitmaps have set bits that matter) and noise
    index.hashes[k] = np.unique(np.concatenate([Hasher.windows(toks, k)[::3], rng.integers(0, 2**63, 1000, np.uint64)]))
    index.seg_of[k] = np.zeros(index.hashes[k].size, np.int64)
    index.build_bitmaps()
    pos, hashes = index.window_candidates(toks, k)
    w = Hasher.windows(toks, k)
    want = index.candidates(w)
    np.testing.assert_array_equal(pos, want)
    np.testing.assert_array_equal(hashes, w[want])
    assert pos.size >= (toks.size - k + 1) // 3
    assert index.window_candidates(toks[: k - 1], k)[0].size == 0  # fewer tokens than a window


def test_a_scan_finds_the_same_segments_with_and_without_the_kernel(kernel, monkeypatch) -> None:
    rng = np.random.default_rng(7)
    items = [_text(rng, 60).decode(errors="replace") for _ in range(30)]
    index = index_module.TestIndex(n=13)
    for i, text in enumerate(items):
        index.add_item("t", f"t-{i}", [("question", text), ("answer", f"{i} 7")])
    index.add_item("t", "short", [("question", "what is 12 plus 30")])
    index.build()
    stream = (_text(rng, 4000) + b" " + items[3].encode() + b" what is 12 plus 30 " + _text(rng, 100)).upper()
    norm, _ = normalize_bytes(stream)

    def found() -> dict[int, int]:
        th, starts, _ = Hasher().spans(norm)
        hits = index_module.StreamHits("s")
        hits.add(index, th, starts, 0, lambda off: f"byte {off}")
        return hits.finish(index).found

    with_kernel = found()
    _numpy_only(monkeypatch)
    assert found() == with_kernel
    assert {index.segments[s].item for s in with_kernel} == {3, len(items)}
