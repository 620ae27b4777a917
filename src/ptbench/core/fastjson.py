"""JSON on the hot paths (the gateway's request bodies, the rollout's histories and traces): orjson
where installed (a few times faster on the large bodies agents send, the whole conversation each
call; it roughly halves a rollout turn's (de)serialising), the standard library otherwise. The one
place either is chosen: nothing else imports orjson.

Reading is the standard library's model either way: orjson refuses some JSON that json accepts (a
lone surrogate, a BOM, NaN), and then json decides. Writing differs only in spacing and in escapes
(orjson writes non-ASCII raw); a line another process splits on (calls.jsonl) is `ascii_line`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

_fast_loads: Callable[[bytes | str], Any]
_orjson_dumps: Callable[..., bytes] | None
_SORT_KEYS = 0
_APPEND_NEWLINE = 0
try:  # orjson is optional (the bootcamp extra)
    import orjson

    _fast_loads = orjson.loads
    _orjson_dumps = orjson.dumps
    _SORT_KEYS = orjson.OPT_SORT_KEYS
    _APPEND_NEWLINE = orjson.OPT_APPEND_NEWLINE
except ImportError:  # pragma: no cover - depends on the environment
    _fast_loads = json.loads
    _orjson_dumps = None


def loads(raw: bytes | str) -> Any:
    """`raw` parsed as json.loads would (duplicate keys: the last wins, escapes decoded); ValueError
    for text that is not JSON."""
    try:
        return _fast_loads(raw)
    except ValueError:
        return json.loads(raw)


def dumps(obj: Any) -> bytes:
    """Compact JSON (UTF-8, non-ASCII raw)."""
    if _orjson_dumps is not None:
        try:
            return _orjson_dumps(obj)
        except TypeError:  # a value orjson refuses (an integer beyond 64 bits)
            pass
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


def dumps_line(obj: Any) -> bytes:
    """`dumps(obj)` and a newline: one JSONL line (a trace, a data row)."""
    if _orjson_dumps is not None:
        try:
            return _orjson_dumps(obj, option=_APPEND_NEWLINE)
        except TypeError:
            pass
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def ascii_line(rec: dict[str, Any]) -> bytes:
    """One JSONL line in ASCII (calls.jsonl, the transcript): not orjson, which writes U+2028 and the
    like raw, and a reader that splits on them (str.splitlines) would find a torn line in a name the
    agent chose."""
    return (json.dumps(rec) + "\n").encode()


def canonical(obj: Any) -> bytes:
    """Compact JSON with sorted keys, for comparing values (the transcript's message fingerprints):
    orjson where installed, else the standard library (the two need not agree: a process uses one)."""
    if _orjson_dumps is not None:
        try:
            return _orjson_dumps(obj, option=_SORT_KEYS)
        except TypeError:
            pass
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()
