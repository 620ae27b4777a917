"""Text normalisation and vectorised n-gram hashing (numpy, 64-bit).

Normalisation: Unicode NFKC, lowercase, every character that is not a letter or digit becomes a
space; tokens are the runs between spaces. ASCII text takes a byte-translate fast path that keeps
byte offsets exact (same result as the general path).

Hashes: each token gets a hash of its length and its first and last eight bytes, mixed with
splitmix64; a window of k tokens is a fixed linear combination of its token hashes, mixed again
and tagged with k. Collisions are ~2^-64 per pair: a false match is not a concern,
and an agent hiding data gains nothing from them.

The token pass and the window pass have a compiled twin (`_kernel.c`, built by pip where a C
compiler is present): the same hashes, about twice the scan's speed. The numpy code is the
reference the tests hold the kernel to, and what runs where it was not built.
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np

try:
    from ptbench.integrity.contamination import _kernel as kernel
except ImportError:  # an install without a C compiler: the numpy code below does the same, slower
    kernel = None  # type: ignore[assignment]

_SPACE = 0x20
_NON_ALNUM = re.compile(r"[\W_]+")
_ASCII_TABLE = bytes(
    (c + 32 if 65 <= c <= 90 else c) if (48 <= c <= 57 or 65 <= c <= 90 or 97 <= c <= 122) else _SPACE
    for c in range(256)
)
# JSON / Python string escapes that would otherwise glue a letter onto the next word ("\\nThen" -> "nthen"):
# the letter after a backslash is blanked too.
_ESCAPED = np.zeros(256, bool)
_ESCAPED[list(b'ntrbf"/\\')] = True
_UNICODE_ESCAPE = re.compile(rb"\\u([0-9a-fA-F]{4})")
_URL_ESCAPE = re.compile(rb"%([0-9a-fA-F]{2})")
_BACKSLASH, _PERCENT = 0x5C, 0x25
_ALNUM = [chr(c).isascii() and chr(c).isalnum() for c in range(256)]  # ASCII letters and digits
_HIGH_KEPT = bytes(_ASCII_TABLE[:128]) + bytes(range(128, 256))  # ASCII normalised, other bytes as they are
_HEXDIGIT = np.zeros(256, bool)
_HEXDIGIT[list(b"0123456789abcdefABCDEF")] = True

_MASKS = np.array([(1 << (8 * i)) - 1 for i in range(8)] + [(1 << 64) - 1], dtype=np.uint64)
_rng = np.random.Generator(np.random.PCG64(20261201))
_MUL = _rng.integers(1, 2**63, size=66, dtype=np.uint64) * np.uint64(2) + np.uint64(1)  # odd window weights
_TAG = _rng.integers(1, 2**63, size=65, dtype=np.uint64)


def normalize_text(text: str) -> bytes:
    """The normal form of any text, as UTF-8 bytes with single spaces between tokens."""
    return _NON_ALNUM.sub(" ", unicodedata.normalize("NFKC", text).lower()).encode()


def normalize_bytes(raw: bytes) -> tuple[bytes, bool]:
    """(normal form, offsets exact?) of raw file bytes: ASCII keeps every byte in place.

    Escapes an agent could hide text behind are decoded first: JSON's \\uXXXX and URL
    encoding's %XX (then offsets are no longer exact); \\n, \\t and the like become spaces.
    """
    exact = True
    for _ in range(3):  # an escape of an escape (%2541) is decoded too, a few levels deep
        a = np.frombuffer(raw, np.uint8)
        bs = np.flatnonzero(a[:-1] == _BACKSLASH)
        after = a[bs + 1]
        pc = np.flatnonzero(a[:-2] == _PERCENT)
        # Ordinary text has a stray "%" ("50% off"); URL-encoded text has many %XX.
        url = pc.size >= 3 and int((_HEXDIGIT[a[pc + 1]] & _HEXDIGIT[a[pc + 2]]).sum()) >= max(3, pc.size // 2)
        if not ((after == 0x75).any() or url):
            break
        decoded = _UNICODE_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)).encode("utf-8", "replace"), raw)
        decoded = _URL_ESCAPE.sub(lambda m: bytes([int(m.group(1), 16)]), decoded)
        if decoded == raw:
            break
        raw, exact = decoded, False
    else:
        a = np.frombuffer(raw, np.uint8)
        bs = np.flatnonzero(a[:-1] == _BACKSLASH)
        after = a[bs + 1]
    esc = bs[_ESCAPED[after]] + 1
    if raw.isascii():
        out = bytearray(raw.translate(_ASCII_TABLE))
        if esc.size:
            np.frombuffer(out, np.uint8)[esc] = _SPACE
        return bytes(out), exact
    if esc.size:
        buf = np.frombuffer(bytearray(raw), np.uint8)
        buf[esc] = _SPACE
        raw = buf.tobytes()
    norm, words_exact = _mixed(raw)
    return norm, exact and words_exact


def _mixed(raw: bytes) -> tuple[bytes, bool]:
    """Text that is mostly ASCII: the ASCII fast path, and the general one word by word for the
    words that hold a non-ASCII character (a word: a run of ASCII letters and digits and non-ASCII
    bytes, so NFKC sees each whole, combining marks included). A normalised word no longer than the
    original is padded with spaces, keeping every offset in place."""
    a = np.frombuffer(raw, np.uint8)
    out = raw.translate(_HIGH_KEPT)
    hp = np.flatnonzero(a >= 0x80)
    if not hp.size:
        return out, True
    cut = np.flatnonzero(np.diff(hp) > 1)
    run_starts = hp[np.concatenate(([0], cut + 1))].tolist()
    run_ends = (hp[np.concatenate((cut, [hp.size - 1]))] + 1).tolist()
    pieces, pos, exact, n, i = [], 0, True, len(raw), 0
    while i < len(run_starts):
        s, e = run_starts[i], run_ends[i]
        while s > pos and _ALNUM[raw[s - 1]]:
            s -= 1
        while True:  # through ASCII letters and digits, and the next non-ASCII run if it touches
            while e < n and _ALNUM[raw[e]]:
                e += 1
            if i + 1 < len(run_starts) and run_starts[i + 1] == e:
                i += 1
                e = run_ends[i]
                continue
            break
        i += 1
        word = normalize_text(raw[s:e].decode("utf-8", errors="replace"))
        if len(word) <= e - s:
            word += b" " * (e - s - len(word))
        else:
            exact = False
        pieces += [out[pos:s], word]
        pos = e
    pieces.append(out[pos:])
    return b"".join(pieces), exact


_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_S1, _S2 = np.uint64(31), np.uint64(29)
_BASE = int(_MUL[2])  # odd: invertible modulo 2**64
_BASE_INV = pow(_BASE, -1, 1 << 64)


def _mix(x: np.ndarray) -> np.ndarray:
    """A 64-bit finaliser (xor-shift, multiply, xor-shift), in place on a temporary."""
    x = x ^ (x >> _S1)
    np.multiply(x, _M1, out=x)
    np.bitwise_xor(x, x >> _S2, out=x)
    return x


def _splitmix(x: np.ndarray) -> np.ndarray:
    x = x ^ (x >> np.uint64(30))
    x = x * _M1
    x = x ^ (x >> np.uint64(27))
    x = x * _M2
    return x ^ (x >> np.uint64(31))


class _Powers:
    """BASE**i and BASE**-i modulo 2**64 for i < n, grown on demand."""

    def __init__(self) -> None:
        self.up = np.empty(0, np.uint64)
        self.down = np.empty(0, np.uint64)

    def get(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        if self.up.size < n:
            size = max(n, 2 * self.up.size, 1 << 16)
            up = np.empty(size, np.uint64)
            down = np.empty(size, np.uint64)
            up[0] = down[0] = 1
            up[1:] = _BASE
            down[1:] = _BASE_INV
            np.multiply.accumulate(up, out=up)
            np.multiply.accumulate(down, out=down)
            self.up, self.down = up, down
        return self.up[:n], self.down[:n]


_POWERS = _Powers()


class Hasher:
    """Token and window hashes of normalised bytes.

    A token's hash mixes its length with its first and last eight bytes, read as unaligned 64-bit
    words straight from the buffer (no per-byte arithmetic). Two different tokens longer than 16
    bytes that agree in length and both ends hash alike; that can only add matches, never hide one.

    A window of k tokens t_i..t_{i+k-1} hashes to mix(sum_j t_{i+j} * B**j  ^ tag_k) modulo 2**64:
    from one prefix sum of the token hashes, each window length costs a subtraction and a multiply
    per token, whatever k is.
    """

    def tokens(self, norm: bytes) -> tuple[np.ndarray, np.ndarray]:
        """(token hashes, token start offsets) of normalised bytes."""
        h, starts, _ = self.spans(norm)
        return h, starts

    def spans(self, norm: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(token hashes, token start offsets, token lengths) of normalised bytes."""
        if not norm:
            return np.empty(0, np.uint64), np.empty(0, np.int64), np.empty(0, np.int64)
        padded = b"\x20" * 8 + norm + b"\x20" * 8
        if kernel is not None:
            cap = (len(padded) + 1) // 2
            h, starts, length = np.empty(cap, np.uint64), np.empty(cap, np.int64), np.empty(cap, np.int64)
            n = kernel.spans(padded, h, starts, length, int(_MUL[1]))
            return h[:n], starts[:n], length[:n]
        return self.spans_numpy(padded)

    @staticmethod
    def spans_numpy(padded: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`spans` of normalised bytes with eight spaces on each side, in numpy."""
        a = np.frombuffer(padded, dtype=np.uint8)
        inside = a != _SPACE
        # The padding starts and ends outside a token: the edges alternate start, end, start, ...
        edges = np.flatnonzero(inside[1:] != inside[:-1]) + 1  # in padded coordinates
        starts, ends = edges[0::2], edges[1::2]
        words = np.ndarray(shape=(a.size - 7,), dtype="<u8", buffer=padded, strides=(1,))
        length = ends - starts
        short = np.minimum(length, 8).astype(np.uint64)
        first = words[starts] & _MASKS[short]
        last = words[ends - 8] >> ((np.uint64(8) - short) * np.uint64(8))
        np.add(last, length.astype(np.uint64) * _MUL[1], out=last)
        h = _mix(np.bitwise_xor(first, _mix(last), out=first))
        return h, starts - 8, length

    @staticmethod
    def prefix(th: np.ndarray) -> np.ndarray:
        """Prefix sums of t_i * B**i (P[0] = 0), for `windows`."""
        up, _ = _POWERS.get(th.size)
        p = np.empty(th.size + 1, np.uint64)
        p[0] = 0
        np.cumsum(th * up, out=p[1:])
        return p

    @staticmethod
    def windows(th: np.ndarray, k: int, prefix: np.ndarray | None = None) -> np.ndarray:
        """Hash of every run of k consecutive tokens (len(th) - k + 1 of them)."""
        m = th.size - k + 1
        if m <= 0:
            return np.empty(0, np.uint64)
        p = Hasher.prefix(th) if prefix is None else prefix
        _, down = _POWERS.get(m)
        g = p[k : k + m] - p[:m]
        np.multiply(g, down, out=g)
        np.bitwise_xor(g, _TAG[k], out=g)
        return _mix(g)

    @staticmethod
    def window_candidates(
        toks: np.ndarray, k: int, hi: np.ndarray, lo: np.ndarray, hi_shift: int, lo_mask: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """With the kernel: (positions, hashes) of the windows of k tokens whose hash has its top
        bits (>> hi_shift) set in bitmap `hi` and its low bits (& lo_mask) in bitmap `lo`."""
        assert kernel is not None
        m = max(toks.size - k + 1, 0)
        toks = np.ascontiguousarray(toks, np.uint64)
        pos, hashes = np.empty(m, np.int64), np.empty(m, np.uint64)
        n = kernel.window_candidates(toks, k, int(_TAG[k]), _BASE, _BASE_INV, hi, lo, hi_shift, lo_mask, pos, hashes)
        return pos[:n], hashes[:n]
