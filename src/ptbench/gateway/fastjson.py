"""JSON on the gateway's hot path: request bodies parsed by orjson where installed (a few times
faster on the large bodies agents send, the whole conversation each call), by the standard library
where orjson refuses them."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

_fast_loads: Callable[[bytes], Any]
_orjson_dumps: Callable[..., bytes] | None
_SORT_KEYS = 0
try:
    import orjson

    _fast_loads = orjson.loads
    _orjson_dumps = orjson.dumps
    _SORT_KEYS = orjson.OPT_SORT_KEYS
except ImportError:
    _fast_loads = json.loads
    _orjson_dumps = None


def load_json(raw: bytes) -> Any:
    """The request body, parsed; orjson reads the same model as json does (duplicate keys: the
    last wins, escapes decoded) and refuses some JSON that json accepts (a lone surrogate, a BOM,
    NaN): then json decides."""
    try:
        return _fast_loads(raw)
    except ValueError:
        return json.loads(raw)


def record_line(rec: dict[str, Any]) -> bytes:
    """One calls.jsonl line, in ASCII: not orjson, which writes U+2028 and the like raw, and a reader
    that splits on them (str.splitlines) would find a torn line in a name the agent chose."""
    return (json.dumps(rec) + "\n").encode()


def canonical(obj: Any) -> bytes:
    """Compact JSON with sorted keys, for comparing values (the transcript's message fingerprints):
    orjson where installed, else the standard library (the two need not agree: a process uses one)."""
    if _orjson_dumps is not None:
        try:
            return _orjson_dumps(obj, option=_SORT_KEYS)
        except TypeError:  # a value orjson refuses (an integer beyond 64 bits)
            pass
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()
