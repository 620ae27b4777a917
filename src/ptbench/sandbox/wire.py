"""Plain data across a process boundary: a strict tagged JSON encoding, and length-prefixed frames.

Used between the trusted checker and the untrusted candidate of a checked run (see checked.py).
The *decoder* is the security boundary: whatever bytes the candidate sends, it yields only
builtin plain values (None, bool, int, float incl. inf/nan, str, bytes, list, tuple, dict, set,
frozenset, range, and a list iterator for a returned generator/iterator) or raises WireError. No
object of a candidate-defined class (say one whose `__eq__` always returns True) can come out of
it, so the test code in the checker compares real values.

This file must stay standard-library only and self-contained: its source text is run verbatim
inside both processes (`python -I -S -c ...`), where ptbench is not importable. It uses only the
C modules behind `json` and `base64` (`_json`, `binascii`): importing `json` itself pulls in `re`
and `enum`, which would double the start-up time of every sandboxed candidate.
"""

import _json
import binascii as _binascii
import os as _os

TYPE_CHECKING = False  # typing is not imported at run time (start-up time, see above)
if TYPE_CHECKING:
    from collections.abc import Callable

MAX_FRAME = 16 << 20  # bytes of one message; more is a protocol error
MAX_DEPTH = 64  # nesting of containers
MAX_ITEMS = 1 << 20  # elements materialised from a returned iterator
_HEX = frozenset("0123456789abcdef")


class WireError(Exception):
    """A message that is not well-formed plain data."""


def encode(value, depth=0):
    """Tagged JSON-ready form of a plain value; subclasses of plain types become their base value."""
    if depth > MAX_DEPTH:
        raise WireError("nested too deeply")
    d = depth + 1
    if value is None:
        return ["none"]
    if isinstance(value, bool):
        return ["bool", bool(value)]
    if isinstance(value, int):
        return ["int", int.__format__(value, "x")]
    if isinstance(value, float):
        return ["float", _float_text(float.__float__(value))]
    if isinstance(value, str):
        return ["str", str.__str__(value)]
    if isinstance(value, (bytes, bytearray)):
        return ["bytes", _binascii.b2a_base64(bytes(value), newline=False).decode()]
    if isinstance(value, range):
        return ["range", [value.start, value.stop, value.step]]
    if isinstance(value, tuple):
        return ["tuple", [encode(v, d) for v in tuple.__iter__(value)]]
    if isinstance(value, list):
        return ["list", [encode(v, d) for v in list.__iter__(value)]]
    if isinstance(value, dict):
        return ["dict", [[encode(k, d), encode(v, d)] for k, v in dict.items(value)]]
    if isinstance(value, frozenset):
        return ["frozenset", [encode(v, d) for v in frozenset.__iter__(value)]]
    if isinstance(value, set):
        return ["set", [encode(v, d) for v in set.__iter__(value)]]
    if hasattr(type(value), "__next__") and hasattr(
        type(value), "__iter__"
    ):  # a generator, map, filter, zip...: its items, as an iterator
        items: list[object] = []
        for item in value:
            if len(items) >= MAX_ITEMS:
                raise WireError("iterator too long")
            items.append(encode(item, d))
        return ["iter", items]
    raise WireError("not plain data: " + type(value).__name__)


def _float_text(x):
    if x != x:
        return "nan"
    if x in (float("inf"), float("-inf")):
        return "inf" if x > 0 else "-inf"
    return x.hex()


def decode(obj, depth=0):
    """The plain value of a tagged form; WireError for anything else."""
    if depth > MAX_DEPTH:
        raise WireError("nested too deeply")
    if type(obj) is not list or not obj or type(obj[0]) is not str:
        raise WireError("not a tagged value")
    tag, rest, d = obj[0], obj[1:], depth + 1
    if tag == "none" and not rest:
        return None
    if len(rest) != 1:
        raise WireError("bad arity for " + tag[:20])
    p = rest[0]
    if tag == "bool" and type(p) is bool:
        return p
    if tag == "int" and type(p) is str:
        digits = p[1:] if p[:1] == "-" else p
        if not 0 < len(digits) <= 100_000 or not set(digits) <= _HEX:
            raise WireError("bad int")
        return int(p, 16)
    if tag == "float" and type(p) is str:
        if p in ("nan", "inf", "-inf"):
            return float(p)
        try:
            return float.fromhex(p)
        except (ValueError, OverflowError):
            raise WireError("bad float") from None
    if tag == "str" and type(p) is str:
        return p
    if tag == "bytes" and type(p) is str:
        try:
            return _binascii.a2b_base64(p, strict_mode=True)
        except (ValueError, _binascii.Error):
            raise WireError("bad bytes") from None
    if type(p) is not list:
        raise WireError("bad payload for " + tag[:20])
    if tag == "range" and len(p) == 3 and all(type(x) is int for x in p) and p[2] != 0:
        return range(*p)
    if tag in ("list", "tuple", "set", "frozenset", "iter"):
        items = [decode(v, d) for v in p]
        try:
            # a local annotation is never evaluated: Callable exists only for the type checker
            makers: dict[str, Callable[[list[object]], object]] = {
                "list": list,
                "tuple": tuple,
                "set": set,
                "frozenset": frozenset,
                "iter": iter,
            }
            return makers[tag](items)
        except TypeError:  # an unhashable set member
            raise WireError("unhashable set member") from None
    if tag == "dict":
        out = {}
        for pair in p:
            if type(pair) is not list or len(pair) != 2:
                raise WireError("bad dict item")
            try:
                out[decode(pair[0], d)] = decode(pair[1], d)
            except TypeError:
                raise WireError("unhashable dict key") from None
        return out
    raise WireError("unknown tag " + tag[:20])


class _Context:
    """What the C scanner of `json` reads its options from (as json.JSONDecoder would give it)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    def __init__(self):
        self.memo = {}

    @staticmethod
    def parse_constant(name):
        raise ValueError("bare " + name)


def dumps(message):
    """JSON text of a message made of dicts (str keys), lists, str, int, bool and None."""
    parts: list[str] = []
    _dump(message, parts, 0)
    return "".join(parts).encode()


def _dump(o, parts, depth):
    if depth > MAX_DEPTH + 4:
        raise WireError("nested too deeply")
    t = type(o)
    if t is str:
        parts.append(_json.encode_basestring_ascii(o))
    elif t is list or t is tuple:
        parts.append("[")
        for i, v in enumerate(o):
            if i:
                parts.append(",")
            _dump(v, parts, depth + 1)
        parts.append("]")
    elif t is dict:
        parts.append("{")
        for i, (k, v) in enumerate(o.items()):
            if type(k) is not str:
                raise WireError("dict key is not a string")
            parts.append(("," if i else "") + _json.encode_basestring_ascii(k) + ":")
            _dump(v, parts, depth + 1)
        parts.append("}")
    elif o is None or t is bool:
        parts.append("null" if o is None else "true" if o else "false")
    elif t is int:
        parts.append(int.__repr__(o))
    else:
        raise WireError("cannot send " + t.__name__)


def loads(data):
    try:
        text = data.decode("utf-8")
        # the C scanner reads only the context's attributes; typeshed types the context as a make_scanner
        value, end = _json.make_scanner(_Context())(text, 0)  # type: ignore[arg-type]
    except (ValueError, RecursionError, StopIteration):
        raise WireError("malformed message") from None
    if text[end:].strip(" \t\n\r"):
        raise WireError("trailing data")
    return value


def send(fd, message):
    """Write one frame (4-byte big-endian length + JSON) to a raw file descriptor."""
    data = dumps(message)
    if len(data) > MAX_FRAME:
        raise WireError("message too large")
    view = memoryview(len(data).to_bytes(4, "big") + data)
    while view:
        view = view[_os.write(fd, view) :]


def _read_exact(fd, n):
    chunks, left = [], n
    while left:
        chunk = _os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError("peer closed the channel")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def recv(fd):
    """Read one frame; EOFError when the peer is gone, WireError when it breaks the protocol."""
    size = int.from_bytes(_read_exact(fd, 4), "big")
    if size > MAX_FRAME:
        raise WireError("message too large")
    return loads(_read_exact(fd, size))
