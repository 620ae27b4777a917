"""final_model/ as training data: what of the submitted model folder the contamination check reads.

An agent can keep test items inside the model it submits (a `generation_config.json` with a note, an
extra file, a tokenizer with the items as added tokens, a "weights" file that is really JSON). Every
file of final_model/ is therefore scanned like a workspace file, except:

- tensor bytes: a file is a weight file only when its content is one, checked whole: safetensors
  (header parsed, every tensor's size from its dtype and shape, the tensors tiling the data with no
  gap and nothing after), GGUF (the same, from ggml's block sizes, zero padding only), torch's zip
  format (every `data/<key>` member named by the pickle) and .npy (size from dtype and shape). Of
  such a file only its free text is read: the safetensors header's `__metadata__` and tensor names
  (dtypes, shapes and offsets are checked, not read: a shape [16, 64] reads as the item 16+64),
  GGUF keys and strings, the pickle's strings and any other zip member. A
  file that fails any test is data, whatever its name: a `.safetensors` that is JSON is read whole.
  Tensor bytes are never read as text (cost, and random bytes would match a two-number item).
- files byte-for-byte equal to a file of the trusted base model: recorded, not read.
- a file with a counterpart of the same path in the base that differs from it: what is new in it is
  read, not what the base already holds. A tokenizer lists the base's vocabulary in id order, and a
  character-level one reads `"$": 13, "%": 14` as the arithmetic item 13+14; a fine-tune that adds
  a pad token rewrites the whole file. JSON is compared as leaves (path and value, duplicate keys
  kept, list positions ignored), other text line by line, binary files as their printable runs.
  What is new is written twice: leaf by leaf as the file reads (`key value`), and then its keys
  alone and its string values alone, so words spread over added tokens (`"josh": 50001, "decides":
  50002`) read as the sentence they spell.
- a file that is neither text, a container nor a weight file (a NUL in its first bytes): its
  printable runs are read (`strings`), so a NUL byte before the items hides nothing.
"""

from __future__ import annotations

import ast
import io
import json
import math
import os
import pickletools
import re
import struct
import zipfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ptbench.core.files import sha256_file
from ptbench.integrity.contamination.decode import container_of, utf16_of
from ptbench.integrity.contamination.sources import kind_of, walk_files

MAX_DIFF = 256 << 20  # a file larger than this is read whole, not compared with the base's
MAX_JSON = 64 << 20  # JSON parsed as leaves up to this size (Python objects take ~10x); larger: line by line
MAX_HEADER = 100 << 20  # safetensors' own limit on its header
_RUNS = re.compile(rb"[\t\n\r\x20-\x7e\x80-\xff]{4,}")
_BLOCK = 16 << 20


@dataclass
class Tensors:
    """A weight file recognised by its content."""

    fmt: str
    text: bytes  # what is not tensor bytes (header, metadata, strings), to be scanned
    tensor_bytes: int


@dataclass
class FinalModelScan:
    """The targets made of final_model/ and how each file was treated (for the check's details)."""

    targets: list[tuple[str, Path]] = field(default_factory=list)
    how: dict[str, str] = field(default_factory=dict)  # final_model/<rel> -> how it was read
    kinds: Counter[str] = field(default_factory=Counter)  # weights, identical to the base, ... -> files
    weights: list[dict[str, Any]] = field(default_factory=list)
    base: str | None = None

    def details(self, seconds: float, bytes_read: int) -> dict[str, Any]:
        return {
            "base": self.base,
            "files": len(self.how),
            "by_kind": dict(sorted(self.kinds.items())),
            "files_how": dict(list(self.how.items())[:100]),
            "weights": self.weights[:50],
            "bytes_to_scan": bytes_read,
            "seconds_to_prepare": round(seconds, 2),
        }


def final_model_targets(final: Path, base: Path | None, tmp: Path) -> FinalModelScan:
    """What of final/ to scan: (label, path) targets, some of them texts written under tmp
    (weight headers, what differs from the base, printable runs), with a neutral name so the
    scanner reads them as text whatever the original's name."""
    out = FinalModelScan(base=str(base) if base else None)
    if not final.is_dir():
        return out
    base_by_size: dict[int, list[Path]] = {}
    if base is not None and base.is_dir():
        for f in walk_files(base, lambda p: False):
            try:
                base_by_size.setdefault(f.stat().st_size, []).append(f)
            except OSError:
                continue
    digests: dict[Path, str] = {}

    def sha(p: Path) -> str:
        if p not in digests:
            digests[p] = sha256_file(p)
        return digests[p]

    def text_target(label: str, data: bytes | Iterator[bytes]) -> None:
        dest = tmp / f"t{len(out.targets)}"
        with open(dest, "wb") as fh:
            for block in [data] if isinstance(data, bytes) else data:
                fh.write(block)
        out.targets.append((label, dest))

    for p in walk_files(final, lambda q: False):
        rel = p.relative_to(final).as_posix()
        label = f"final_model/{rel}"
        size = p.stat().st_size
        tensors = tensor_file(p)
        if tensors is not None:
            out.weights.append({"file": label, "format": tensors.fmt, "tensor_bytes": tensors.tensor_bytes})
            out.how[label] = (
                f"weights: {tensors.fmt} ({tensors.tensor_bytes} tensor bytes not read), its free text read"
            )
            out.kinds["weights (free text read, tensor bytes not)"] += 1
            text_target(f"{label} ({tensors.fmt}: its free text)", tensors.text)
            continue
        same = [b for b in base_by_size.get(size, []) if sha(b) == sha(p)]
        if same:
            name = same[0].relative_to(base).as_posix() if base else same[0].name
            out.how[label] = f"identical to the base model's {name}: not read"
            out.kinds["identical to the base model's (not read)"] += 1
            continue
        counterpart = base / rel if base is not None else None
        binary = _binary(p)
        if (
            counterpart is not None
            and counterpart.is_file()
            and size <= MAX_DIFF
            and counterpart.stat().st_size <= MAX_DIFF
        ):
            new, method = new_content(p.read_bytes(), counterpart.read_bytes(), binary)
            out.how[label] = f"compared with the base model's {rel}: {method} not in it read"
            out.kinds["compared with the base model's (what is new read)"] += 1
            text_target(f"{label} ({method} not in the base model's)", new)
            continue
        if binary:
            out.how[label] = "read: printable runs (a binary file)"
            out.kinds["read (printable runs)"] += 1
            text_target(f"{label} (printable runs)", _runs_of(p))
        elif kind_of(p) is None:  # a weight-like or binary name on a file that is neither: read as text
            link = tmp / f"t{len(out.targets)}"
            os.symlink(p, link)
            out.how[label] = "read (its name says binary; its content is not a weight file)"
            out.kinds["read"] += 1
            out.targets.append((label, link))
        else:
            out.how[label] = "read"
            out.kinds["read"] += 1
            out.targets.append((label, p))
    return out


WEIGHT_NAMES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".gguf", ".npy")


def weight_named_targets(files: list[tuple[str, Path]], tmp: Path) -> tuple[list[tuple[str, Path]], dict[str, str]]:
    """Files of the workspace or HOME whose name says weights (the scan skips binary names): the free
    text of a real weight file; a file whose first bytes are text (a `.safetensors` that is JSON) read
    as text. Any other binary file stays unread, as other binary names do (a tokenized `train.bin`
    read by its printable runs would match two-number items by chance)."""
    targets: list[tuple[str, Path]] = []
    how: dict[str, str] = {}
    for label, p in files:
        dest = tmp / f"w{len(targets)}"
        tensors = tensor_file(p)
        if tensors is not None:
            dest.write_bytes(tensors.text)
            targets.append((f"{label} ({tensors.fmt}: its free text)", dest))
            how[label] = f"weights: {tensors.fmt}, its free text read"
        elif not _binary(p):
            os.symlink(p, dest)  # a neutral name: read as the text (or container) it is
            targets.append((label, dest))
            how[label] = "read (its name says weights; its content is not a weight file)"
        else:
            how[label] = "not read (binary, not a weight file)"
    return targets, how


def _binary(p: Path) -> bool:
    """Neither text, nor a container the scanner opens, nor UTF-16: the scanner would read nothing."""
    with open(p, "rb") as fh:
        head = fh.read(8192)
    if container_of(head[:512]) is not None or kind_of(p) in ("table", "archive", "gzip"):
        return False
    return b"\0" in head and utf16_of(head) is None


def _runs_of(p: Path) -> Iterator[bytes]:
    """Printable runs of a binary file, one per line, read in blocks."""
    carry = b""
    with open(p, "rb") as fh:
        while block := fh.read(_BLOCK):
            data = carry + block
            runs = list(_RUNS.finditer(data))
            carry = b""
            if runs and runs[-1].end() == len(data):  # may go on in the next block
                carry = runs.pop().group(0)
            yield b"".join(m.group(0) + b"\n" for m in runs)
    if len(carry) >= 4:
        yield carry + b"\n"


# --- what is new against the base -----------------------------------------------------------------


class _Obj(list):
    """A JSON object as its (key, value) pairs, duplicates kept (json.loads keeps only the last)."""


def new_content(final: bytes, base: bytes, binary: bool) -> tuple[bytes, str]:
    """(text of what `final` holds that `base` does not, how it was compared)."""
    if not binary and max(len(final), len(base)) <= MAX_JSON:
        try:
            f, b = (json.loads(x, object_pairs_hook=_Obj) for x in (final, base))
            return _new_leaves(f, b), "JSON entries"
        except (ValueError, UnicodeDecodeError, RecursionError):  # not JSON (or nested past Python's stack)
            pass
    if not binary:
        return _new_units(final.splitlines(), base.splitlines()), "lines"
    runs = lambda data: [m.group(0) for m in _RUNS.finditer(data)]  # noqa: E731
    return _new_units(runs(final), runs(base)), "printable runs"


def _new_units(final: list[bytes], base: list[bytes]) -> bytes:
    have = Counter(base)
    out = []
    for unit in final:
        if have[unit] > 0:
            have[unit] -= 1
        else:
            out.append(unit)
    return b"\n".join(out) + b"\n"


def _leaves(v: Any, path: tuple[str, ...], out: list[tuple[tuple[str, ...], Any]]) -> None:
    if isinstance(v, _Obj):
        for k, x in v:
            _leaves(x, (*path, k), out)
    elif isinstance(v, list):
        for x in v:
            _leaves(x, (*path, "[]"), out)
    else:
        out.append((path, v))


def _new_leaves(final: Any, base: Any) -> bytes:
    mine: list[tuple[tuple[str, ...], Any]] = []
    theirs: list[tuple[tuple[str, ...], Any]] = []
    _leaves(final, (), mine)
    _leaves(base, (), theirs)
    have = Counter((p, json.dumps(v)) for p, v in theirs)
    new = []
    for p, v in mine:
        key = (p, json.dumps(v))
        if have[key] > 0:
            have[key] -= 1
        else:
            new.append((p, v))
    keys = [k for p, _ in new for k in p[-1:] if k != "[]"]
    as_read = [
        " ".join([*[k for k in p[-1:] if k != "[]"], v if isinstance(v, str) else json.dumps(v)]) for p, v in new
    ]
    strings = [v for _, v in new if isinstance(v, str)]
    return "\n\n".join("\n".join(part) for part in (as_read, keys, strings)).encode("utf-8", "surrogatepass") + b"\n"


# --- weight files, by content ---------------------------------------------------------------------

_ST_SIZES = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "F8_E8M0": 1,
    "I16": 2, "U16": 2, "F16": 2, "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "I64": 8, "U64": 8, "F64": 8, "C64": 8,
}  # fmt: skip
# ggml type -> (elements per block, bytes per block), as gguf-py's GGML_QUANT_SIZES (QK_K = 256)
_GGML = {
    0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34), 9: (32, 40),
    10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210), 15: (256, 292),
    16: (256, 66), 17: (256, 74), 18: (256, 98), 19: (256, 50), 20: (32, 18), 21: (256, 110), 22: (256, 82),
    23: (256, 136), 24: (1, 1), 25: (1, 2), 26: (1, 4), 27: (1, 8), 28: (1, 8), 29: (256, 56), 30: (1, 2),
    34: (256, 54), 35: (256, 66), 39: (32, 17), 40: (64, 36), 41: (128, 18),
}  # fmt: skip


def tensor_file(p: Path) -> Tensors | None:
    """The weight file `p` is, checked whole (not from its name or first bytes alone), or None."""
    try:
        size = p.stat().st_size
        with open(p, "rb") as fh:
            head = fh.read(16)
            fh.seek(0)
            if head.startswith(b"GGUF"):
                return _gguf(fh, size)
            if head.startswith(b"\x93NUMPY"):
                return _npy(fh, size)
            if head.startswith(b"PK\x03\x04"):
                return _torch_zip(p)
            if len(head) > 8 and head[8:9] == b"{":
                return _safetensors(fh, size)
    except Exception:  # noqa: BLE001  (whatever fails to parse is not a weight file: it is read as data)
        return None
    return None


def _safetensors(fh, size: int) -> Tensors | None:
    n = int.from_bytes(fh.read(8), "little")
    if not 2 <= n <= min(size - 8, MAX_HEADER):
        return None
    raw = fh.read(n)
    header = json.loads(raw)
    if not isinstance(header, dict):
        return None
    spans = []
    for name, t in header.items():
        if name == "__metadata__":
            if not isinstance(t, dict) or not all(isinstance(v, str) for v in t.values()):
                return None
            continue
        if not isinstance(t, dict) or set(t) != {"dtype", "shape", "data_offsets"}:
            return None
        item, shape, offsets = _ST_SIZES.get(t["dtype"]), t["shape"], t["data_offsets"]
        if item is None or not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape):
            return None
        if not isinstance(offsets, list) or len(offsets) != 2 or not all(type(o) is int for o in offsets):
            return None
        a, b = offsets
        if b - a != math.prod(shape) * item:
            return None
        spans.append((a, b))
    pos = 0
    for a, b in sorted(spans):
        if a != pos:  # a gap or an overlap: bytes no tensor claims
            return None
        pos = b
    if pos != size - 8 - n:  # anything after the last tensor is not a tensor
        return None
    # The free text of the header: metadata and tensor names. Dtypes, shapes and offsets were checked
    # above; read as text, a shape [16, 64] would be the arithmetic item 16+64.
    meta = header.get("__metadata__") or {}
    lines = [f"{k} {v}" for k, v in meta.items()] + [k for k in header if k != "__metadata__"]
    return Tensors("safetensors", "\n".join(lines).encode("utf-8", "surrogatepass"), pos)


def _npy(fh, size: int) -> Tensors | None:
    import numpy as np

    magic = fh.read(8)
    major = magic[6]
    n = struct.unpack("<H", fh.read(2))[0] if major == 1 else struct.unpack("<I", fh.read(4))[0]
    raw = fh.read(n)
    meta = ast.literal_eval(raw.decode("latin-1"))
    if not isinstance(meta, dict) or set(meta) != {"descr", "fortran_order", "shape"}:
        return None
    dtype = np.dtype(meta["descr"])
    shape = meta["shape"]
    if dtype.hasobject or not isinstance(shape, tuple) or not all(type(d) is int and d >= 0 for d in shape):
        return None  # an object array is a pickle: data, not tensor bytes
    data = math.prod(shape) * dtype.itemsize
    if fh.tell() + data != size or dtype.names is not None:
        return None  # a structured dtype has field names: free text, rare in weights; read as data
    return Tensors("npy", b"", data)  # nothing but dtype and shape, checked


def _pickle_strings(data: bytes) -> list[bytes]:
    out = []
    for _op, arg, _pos in pickletools.genops(io.BytesIO(data)):
        if isinstance(arg, str):
            out.append(arg.encode("utf-8", "surrogatepass"))
        elif isinstance(arg, (bytes, bytearray)):
            out.append(bytes(arg))
    return out


def _torch_zip(p: Path) -> Tensors | None:
    """torch.save's zip: `<root>/data.pkl` (the object, its strings read), `<root>/data/<key>`
    (storages: tensor bytes, each named by the pickle), small members (read)."""
    with zipfile.ZipFile(p) as zf:
        infos = [i for i in zf.infolist() if not i.is_dir()]
        roots = {i.filename.split("/", 1)[0] for i in infos}
        if len(roots) != 1 or any("/" not in i.filename for i in infos):
            return None
        root = roots.pop()
        try:
            pkl = zf.getinfo(f"{root}/data.pkl")
        except KeyError:
            return None
        if pkl.file_size > MAX_HEADER:
            return None
        strings = _pickle_strings(zf.read(pkl))
        named = {s.decode("utf-8", "replace") for s in strings}
        parts, tensor_bytes = [b"\n".join(strings)], 0
        for info in infos:
            rest = info.filename[len(root) + 1 :]
            if info is pkl or info.filename == pkl.filename:
                continue
            if rest.startswith("data/") and rest[5:] in named:
                tensor_bytes += info.file_size
                continue
            if info.file_size > MAX_HEADER:
                return None  # a large member no storage key names: the whole file is data
            parts.append(f"{info.filename}\n".encode() + zf.read(info))
    return Tensors("torch", b"\n".join(parts), tensor_bytes)


def _gguf(fh, size: int) -> Tensors | None:
    def u32() -> int:
        return struct.unpack("<I", fh.read(4))[0]

    def u64() -> int:
        return struct.unpack("<Q", fh.read(8))[0]

    def string() -> bytes:
        n = u64()
        if n > MAX_HEADER:
            raise ValueError("string too long")
        s = fh.read(n)
        if len(s) != n:
            raise ValueError("truncated")
        return s

    scalar = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
    fh.read(4)
    if u32() not in (2, 3):
        return None
    n_tensors, n_kv = u64(), u64()
    if n_tensors > 1 << 20 or n_kv > 1 << 20:
        return None
    text: list[bytes] = []
    alignment = 32

    def value(t: int, key: bytes) -> None:
        nonlocal alignment
        if t == 8:
            text.append(string())
        elif t == 9:
            et, count = u32(), u64()
            if et == 8:
                # an array of strings (a vocabulary) reads as JSON's `"token": id` would
                text.extend(string() + b" %d" % i for i in range(count))
            elif et in scalar:
                fh.seek(count * scalar[et], 1)
            else:
                raise ValueError("nested array")
        elif t in scalar:
            raw = fh.read(scalar[t])
            if key == b"general.alignment" and t == 4:
                alignment = struct.unpack("<I", raw)[0]
        else:
            raise ValueError(f"value type {t}")

    for _ in range(n_kv):
        key = string()
        text.append(key)
        value(u32(), key)
    tensors = []
    for _ in range(n_tensors):
        name = string()
        text.append(name)
        dims = [u64() for _ in range(u32())]
        kind, offset = u32(), u64()
        if kind not in _GGML:
            return None
        block, nbytes = _GGML[kind]
        count = math.prod(dims)
        if count % block:
            return None
        tensors.append((offset, offset + count // block * nbytes))
    if not 1 <= alignment <= 1 << 16:
        return None
    start = -(-fh.tell() // alignment) * alignment
    if not _zeros(fh, fh.tell(), start):
        return None
    pos = 0
    for a, b in sorted(tensors):
        if a != -(-pos // alignment) * alignment or not _zeros(fh, start + pos, start + a):
            return None  # each tensor where the previous one ends, aligned: no room for anything else
        pos = b
    end = size - start
    if not pos <= end < pos + alignment or not _zeros(fh, start + pos, size):
        return None
    return Tensors("gguf", b"\n".join(text), pos)


def _zeros(fh, a: int, b: int) -> bool:
    """Whether bytes [a, b) of the file are all zero (padding hides nothing)."""
    if b <= a:
        return b == a
    fh.seek(a)
    return fh.read(b - a).count(0) == b - a
