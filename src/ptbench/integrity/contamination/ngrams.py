"""Text normalisation and vectorised n-gram hashing (numpy, 64-bit).

Normalisation: Unicode NFKC, lowercase, every character that is not a letter or digit becomes a
space; tokens are the runs between spaces. ASCII text takes a byte-translate fast path that keeps
byte offsets exact (same result as the general path).

Hashes: each token gets a hash of its length and its first and last eight bytes, mixed with
splitmix64; a window of k tokens is a fixed linear combination of its token hashes, mixed again
and tagged with k. Collisions are ~2^-64 per pair: a false match is not a concern,
and an agent hiding data gains nothing from them.
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np

_SPACE = 0x20
_NON_ALNUM = re.compile(r"[\W_]+")
_ASCII_TABLE = bytes(
    (c + 32 if 65 <= c <= 90 else c) if (48 <= c <= 57 or 65 <= c <= 90 or 97 <= c <= 122) else _SPACE
    for c in range(256)
)
# JSON / Python string escapes that would otherwise glue a letter onto the next word ("\nThen" -> "nthen").
_ESCAPES = (b"\\n", b"\\t", b"\\r", b'\\"', b"\\/", b"\\\\")
_UNICODE_ESCAPE = re.compile(rb"\\u([0-9a-fA-F]{4})")

_MASKS = np.array([(1 << (8 * i)) - 1 for i in range(8)] + [(1 << 64) - 1], dtype=np.uint64)
_rng = np.random.Generator(np.random.PCG64(20261201))
_MUL = _rng.integers(1, 2**63, size=66, dtype=np.uint64) * np.uint64(2) + np.uint64(1)  # odd window weights
_TAG = _rng.integers(1, 2**63, size=65, dtype=np.uint64)


def normalize_text(text: str) -> bytes:
    """The normal form of any text, as UTF-8 bytes with single spaces between tokens."""
    return _NON_ALNUM.sub(" ", unicodedata.normalize("NFKC", text).lower()).encode()


def normalize_bytes(raw: bytes) -> tuple[bytes, bool]:
    """(normal form, offsets exact?) of raw file bytes: ASCII keeps every byte in place."""
    for esc in _ESCAPES:
        if esc in raw:
            raw = raw.replace(esc, b"  ")
    if raw.isascii():
        return raw.translate(_ASCII_TABLE), True
    if b"\\u" in raw:
        raw = _UNICODE_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)).encode("utf-8", "replace"), raw)
    return normalize_text(raw.decode("utf-8", errors="replace")), False


def _splitmix(x: np.ndarray) -> np.ndarray:
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


class Hasher:
    """Token and window hashes of normalised bytes.

    A token's hash mixes its length with its first and last eight bytes, read as unaligned 64-bit
    words straight from the buffer (no per-byte arithmetic). Two different tokens longer than 16
    bytes that agree in length and both ends hash alike; that can only add matches, never hide one.
    """

    def tokens(self, norm: bytes) -> tuple[np.ndarray, np.ndarray]:
        """(token hashes, token start offsets) of normalised bytes."""
        if not norm:
            return np.empty(0, np.uint64), np.empty(0, np.int64)
        padded = b"\x20" * 8 + norm + b"\x20" * 8
        a = np.frombuffer(padded, dtype=np.uint8)
        inside = (a != _SPACE).view(np.int8)
        edges = np.diff(inside)
        starts = np.flatnonzero(edges == 1) + 1  # in padded coordinates
        ends = np.flatnonzero(edges == -1) + 1
        words = np.ndarray(shape=(a.size - 7,), dtype="<u8", buffer=padded, strides=(1,))
        length = ends - starts
        short = np.minimum(length, 8).astype(np.uint64)
        first = words[starts] & _MASKS[short]
        last = words[ends - 8] >> ((np.uint64(8) - short) * np.uint64(8))
        h = _splitmix(first * _MUL[0] ^ _splitmix(last ^ _TAG[0]) ^ length.astype(np.uint64) * _MUL[1])
        return h, starts - 8

    @staticmethod
    def windows(th: np.ndarray, k: int) -> np.ndarray:
        """Hash of every run of k consecutive tokens (len(th) - k + 1 of them)."""
        m = th.size - k + 1
        if m <= 0:
            return np.empty(0, np.uint64)
        g = th[:m] * _MUL[2]
        for j in range(1, k):
            g += th[j : j + m] * _MUL[j + 2]
        return _splitmix(g ^ _TAG[k])
