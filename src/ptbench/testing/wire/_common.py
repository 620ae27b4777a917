"""Shared pieces of the wire formats: responses, SSE frames, ids, token estimates."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any


@dataclass
class WireResponse:
    status: int = 200
    body: Any = None  # a JSON body, or None when `events` is used
    events: list[str] = field(default_factory=list)  # complete SSE frames of a streamed reply

    @property
    def streamed(self) -> bool:
        return self.body is None


def sse(data: Any, event: str | None = None) -> str:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, separators=(',', ':'))}\n\n"


def new_id(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:24]}"


def now() -> int:
    return int(time.time())


def estimate_tokens(obj: Any) -> int:
    """About four characters a token: enough for CLIs that parse and sum usage."""
    text = obj if isinstance(obj, str) else json.dumps(obj, default=str)
    return max(1, len(text) // 4)


def text_of(content: Any) -> str:
    """Flatten the many shapes of message content (string, list of parts, dicts) into text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text_of(c) for c in content)
    if isinstance(content, dict):
        for key in ("text", "content", "output", "input", "result"):
            if key in content:
                return text_of(content[key])
        return json.dumps(content, default=str)
    return str(content)
