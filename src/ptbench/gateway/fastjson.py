"""JSON on the gateway's hot path: request bodies parsed by orjson where installed (a few times
faster on the large bodies agents send, the whole conversation each call), by the standard library
where orjson refuses them."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

_fast_loads: Callable[[bytes], Any]
try:
    import orjson

    _fast_loads = orjson.loads
except ImportError:
    _fast_loads = json.loads


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
