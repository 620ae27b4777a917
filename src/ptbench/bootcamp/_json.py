"""Fast JSON for the rollout hot path: orjson when installed, the standard library otherwise."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

_orjson: ModuleType | None
try:  # orjson is optional; it roughly halves the per-turn CPU cost of (de)serialising histories
    import orjson as _orjson
except ImportError:  # pragma: no cover - depends on the environment
    _orjson = None


def dumps(obj: Any) -> bytes:
    if _orjson is not None:
        return _orjson.dumps(obj)
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


def dumps_line(obj: Any) -> bytes:
    if _orjson is not None:
        return _orjson.dumps(obj, option=_orjson.OPT_APPEND_NEWLINE)
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def loads(data: bytes | str) -> Any:
    if _orjson is not None:
        return _orjson.loads(data)
    return json.loads(data)
