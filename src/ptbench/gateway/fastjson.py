"""JSON on the gateway's hot path: orjson where installed (a few times faster on the large request
bodies agents send, the whole conversation each call), the standard library for what orjson refuses."""

from __future__ import annotations

import json
from typing import Any

try:
    from orjson import dumps as _fast_dumps
    from orjson import loads as _fast_loads
except ImportError:
    _fast_loads = json.loads
    _fast_dumps = None


def load_json(raw: bytes) -> Any:
    """The request body, parsed; orjson reads the same model as json does (duplicate keys: the
    last wins, escapes decoded) and refuses some JSON that json accepts (a lone surrogate, a BOM,
    NaN): then json decides."""
    try:
        return _fast_loads(raw)
    except ValueError:
        return json.loads(raw)


def record_line(rec: dict[str, Any]) -> bytes:
    """One calls.jsonl line; json writes what orjson refuses (a model name with a lone surrogate)."""
    if _fast_dumps is not None:
        try:
            return _fast_dumps(rec) + b"\n"
        except TypeError:
            pass
    return (json.dumps(rec) + "\n").encode()
