"""What an agent would hide text behind, opened before matching.

Found in text: base64 (standard and URL-safe alphabets, also wrapped over lines) and hex blobs.
A blob is a run of the base64 alphabet around a long token (normalised text splits a blob at
"+" and "/", so every blob of any length has tokens of 16 or more characters; ordinary words
rarely do, which keeps the cost on ordinary text to a look at a few long identifiers and hashes).
Decoded bytes are read as text if they look like text, and opened if they start like a container:
gzip, zlib, bz2, xz, zip or tar, each nested in the others or in more base64, to `MAX_DEPTH`.

Bounds (zip bombs): one decoded piece is at most `MAX_PIECE` bytes, and one scanned file may yield
at most `Budget.total` bytes of decoded text. What a bound cut off is recorded in `Budget.cut`;
the check reports it and cannot call such a file clean.
"""

from __future__ import annotations

import binascii
import bz2
import io
import lzma
import re
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

MIN_TOKEN = 16  # a normalised token this long may be part of a blob
MIN_BLOB = 24  # characters of a run worth decoding (18 bytes of base64, 12 of hex)
MAX_DEPTH = 6  # decodings nested in one another (base64 -> gzip -> tar -> base64 -> ...)
MAX_PIECE = 64 << 20  # bytes one decoding may produce
TOTAL = 1 << 30  # decoded bytes per scanned file

_ALPHABET = rb"A-Za-z0-9+/=_\-"
_RUN = re.compile(rb"[" + _ALPHABET + rb"]+(?:(?:\r?\n|\\n)[" + _ALPHABET + rb"]{16,})*")
_RUN_START = re.compile(rb"[^" + _ALPHABET + rb"][" + _ALPHABET + rb"]*\Z")
_WRAP = re.compile(rb"\r?\n|\\n")
_HEX = re.compile(rb"[0-9a-fA-F]+")
_PRINTABLE = np.zeros(256, bool)
_PRINTABLE[[9, 10, 13, *range(32, 127), *range(128, 256)]] = True


@dataclass
class Budget:
    total: int = TOTAL
    cut: list[str] = field(default_factory=list)  # what a bound stopped (where, why)

    def take(self, n: int, where: str) -> bool:
        if n > self.total:
            self.cut.append(f"{where}: decoding bound reached ({TOTAL} bytes per file)")
            self.total = 0
            return False
        self.total -= n
        return True


@dataclass
class Piece:
    where: str  # e.g. "byte 120 base64 > gzip > member a/b.txt"
    data: bytes  # text-like bytes, to be normalised and searched (for blobs too)
    depth: int  # decodings it took to get here


def blob_spans(raw: bytes, starts: np.ndarray, lengths: np.ndarray, exact: bool, skip_before: int = 0):
    """(start, end) in raw of each base64/hex run worth decoding, in order, not overlapping."""
    if exact:
        cand = starts[lengths >= MIN_TOKEN]
    else:  # offsets in the normal form are not raw offsets: find long runs in the raw bytes
        cand = np.array([m.start() for m in re.finditer(rb"[A-Za-z0-9]{%d,}" % MIN_TOKEN, raw)], np.int64)
    end = skip_before
    for s in cand.tolist():
        if s < end:
            continue
        back = raw[max(0, s - 256) : s]
        m = _RUN_START.search(back)
        if m is None and s > 256:
            back = raw[max(0, s - MAX_PIECE) : s]
            m = _RUN_START.search(back)
        lo = s - len(back) + (m.start() + 1 if m else 0)
        hi = _RUN.match(raw, lo)
        end = hi.end() if hi else s + 1
        if end - lo >= MIN_BLOB and lo >= skip_before:
            yield lo, end


def decode_blob(text: bytes) -> tuple[str, bytes] | None:
    """(encoding, bytes) of one run, or None if it decodes to nothing."""
    text = _WRAP.sub(b"", text)
    if len(text) >= 32 and len(text) % 2 == 0 and _HEX.fullmatch(text):
        out = bytes.fromhex(text.decode())
        if _container(out) or _texty(out) or utf16_of(out[:8192]):
            return "hex", out
    body = text.rstrip(b"=")
    if b"-" in body or b"_" in body:
        body = body.replace(b"-", b"+").replace(b"_", b"/")
    for shift in range(4):  # a run cut out of a longer one may start off the 4-character grid
        part = body[shift:]
        part = part[:-1] if len(part) % 4 == 1 else part + b"=" * (-len(part) % 4)
        try:
            out = binascii.a2b_base64(part)
        except (binascii.Error, ValueError):
            continue
        if _container(out) or _texty(out) or utf16_of(out[:8192]):
            return "base64", out
    return None


def _texty(data: bytes) -> bool:
    if len(data) < 8:
        return False
    sample = np.frombuffer(data[:65536], np.uint8)
    if not _PRINTABLE[sample].mean() >= 0.95:
        return False
    try:
        data[:65536].decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= 65536 - 4
    return True


def utf16_of(head: bytes) -> str | None:
    """The UTF-16 codec of bytes that look like UTF-16 text (a BOM, or zeros in every other byte
    of mostly Latin text), else None."""
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return "utf-16"
    sample = np.frombuffer(head[: 8192 - 8192 % 2], np.uint8)
    if sample.size < 16:
        return None
    even, odd = (sample[0::2] == 0).mean(), (sample[1::2] == 0).mean()
    if odd > 0.4 and even < 0.05:
        return "utf-16-le"
    if even > 0.4 and odd < 0.05:
        return "utf-16-be"
    return None


def _container(data: bytes) -> str | None:
    if data[:2] == b"\x1f\x8b":
        return "gzip"
    if len(data) > 2 and data[0] == 0x78 and data[1] in (0x01, 0x5E, 0x9C, 0xDA):
        return "zlib"
    if data[:3] == b"BZh":
        return "bz2"
    if data[:6] == b"\xfd7zXZ\x00":
        return "xz"
    if data[:4] == b"PK\x03\x04":
        return "zip"
    if data[257:262] == b"ustar":
        return "tar"
    return None


def container_of(head: bytes) -> str | None:
    """The container a file's first 512 bytes say it is (whatever its name), or None."""
    return _container(head)


def _inflate(kind: str, data: bytes, where: str, budget: Budget) -> bytes | None:
    cap = min(MAX_PIECE, budget.total)
    if kind in ("gzip", "zlib"):
        out = bytearray()
        while data:
            d = zlib.decompressobj(47)  # gzip or zlib header, told apart by zlib; members one after another
            try:
                out += d.decompress(data, cap + 1 - len(out))
            except zlib.error:
                break
            if len(out) > cap or not d.eof:
                break
            data = d.unused_data
        result = bytes(out)
    else:
        dec = bz2.BZ2Decompressor() if kind == "bz2" else lzma.LZMADecompressor()
        try:
            result = dec.decompress(data, max_length=cap + 1)
        except (OSError, lzma.LZMAError, EOFError):
            return None
    if len(result) > cap:
        budget.cut.append(f"{where}: {kind} expands past {cap} bytes (a zip bomb?); the rest was not read")
        result = result[:cap]
    return result if budget.take(len(result), where) else None


def _members(kind: str, data: bytes, where: str, budget: Budget) -> Iterator[tuple[str, bytes]]:
    if kind == "zip":
        try:
            zf = zipfile.ZipFile(io.BytesIO(data))
        except (zipfile.BadZipFile, OSError):
            return
        for info in zf.infolist():
            if info.is_dir():
                continue
            cap = min(MAX_PIECE, budget.total)
            try:
                with zf.open(info) as fh:
                    body = fh.read(cap + 1)
            except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError, zlib.error):
                continue
            if len(body) > cap:
                budget.cut.append(f"{where} > member {info.filename}: more than {cap} bytes; the rest was not read")
                body = body[:cap]
            if budget.take(len(body), where):
                yield info.filename, body
        return
    try:
        tf = tarfile.open(fileobj=io.BytesIO(data), mode="r:")
        members = [m for m in tf if m.isfile()]
    except (tarfile.TarError, OSError, EOFError):
        return
    for m in members:
        member = tf.extractfile(m)
        cap = min(MAX_PIECE, budget.total)
        if member is None:
            continue
        if m.size > cap:
            budget.cut.append(f"{where} > member {m.name}: more than {cap} bytes; the rest was not read")
        body = member.read(cap)
        if budget.take(len(body), where):
            yield m.name, body


def unpack(data: bytes, where: str, budget: Budget, depth: int = 0) -> Iterator[Piece]:
    """The text inside decoded bytes: themselves if text, else what their container holds."""
    if depth > MAX_DEPTH:
        budget.cut.append(f"{where}: nested deeper than {MAX_DEPTH} decodings; not opened")
        return
    kind = _container(data)
    if kind in ("gzip", "zlib", "bz2", "xz"):
        inner = _inflate(kind, data, f"{where} > {kind}", budget)
        if inner is not None:
            yield from unpack(inner, f"{where} > {kind}", budget, depth + 1)
    elif kind in ("zip", "tar"):
        for name, body in _members(kind, data, f"{where} > {kind}", budget):
            yield from unpack(body, f"{where} > {kind} member {name}", budget, depth + 1)
    elif _texty(data):
        yield Piece(where, data, depth)
    elif (codec := utf16_of(data[:8192])) is not None:
        yield Piece(f"{where} > utf-16", data.decode(codec, errors="replace").encode(), depth)


def pieces_in(
    raw: bytes,
    starts: np.ndarray,
    lengths: np.ndarray,
    exact: bool,
    locate,
    budget: Budget,
    depth: int = 0,
    skip_before: int = 0,
) -> Iterator[Piece]:
    """Every decodable blob in a chunk of text, decoded and unpacked."""
    for lo, hi in blob_spans(raw, starts, lengths, exact, skip_before):
        got = decode_blob(raw[lo:hi])
        if got is None:
            continue
        enc, data = got
        where = f"{locate(lo)} {enc}"
        if depth + 1 > MAX_DEPTH:
            budget.cut.append(f"{where}: nested deeper than {MAX_DEPTH} decodings; not opened")
            continue
        if budget.take(len(data), where):
            yield from unpack(data, where, budget, depth + 1)
