"""What the gateway must know of each wire format: which API a path is, the model, usage, errors.

Four APIs reach it (the ones the agent CLIs speak): Anthropic Messages (Claude Code), OpenAI
Responses (Codex), OpenAI Chat Completions (OpenCode's openai-compatible provider) and Gemini
generateContent / streamGenerateContent (Gemini CLI). Usage is normalised to
input (uncached) / output / cache_read / cache_write tokens.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

SSE_DATA = b"data:"
_USAGE = b"usage"  # in "usage" and "usageMetadata"


@dataclass
class Usage:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    seen: bool = False  # the reply carried a usage block

    def to_json(self) -> dict[str, int]:
        return {
            "input_tokens": self.input,
            "output_tokens": self.output,
            "cache_read_tokens": self.cache_read,
            "cache_write_tokens": self.cache_write,
        }


def api_of(method: str, path: str) -> str:
    """The API a request path belongs to ("" for probes and anything unknown)."""
    p = path.rstrip("/")
    if method != "POST":
        return "models" if p.endswith("/models") else ""
    if p.endswith("/messages/count_tokens"):
        return "anthropic.count_tokens"
    if p.endswith("/messages"):
        return "anthropic"
    if p.endswith("/responses") or p.endswith("/responses/compact"):
        return "responses"
    if p.endswith("/chat/completions"):
        return "chat"
    if "/models/" in p and ":" in p.rsplit("/", 1)[1]:
        verb = p.rsplit(":", 1)[1]
        return "gemini" if verb in ("generateContent", "streamGenerateContent") else "gemini." + verb
    return ""


def gemini_model(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[1].partition(":")[0]


def error_body(api: str, status: int, message: str) -> dict[str, Any]:
    """An error in the format the CLI parses, so it shows `message` to the user."""
    if api.startswith("anthropic"):
        typ = {401: "authentication_error", 403: "permission_error", 429: "rate_limit_error"}.get(
            status, "invalid_request_error"
        )
        return {"type": "error", "error": {"type": typ, "message": message}}
    if api.startswith("gemini"):
        state = {401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 429: "RESOURCE_EXHAUSTED"}.get(
            status, "INVALID_ARGUMENT"
        )
        return {"error": {"code": status, "message": message, "status": state}}
    code = {401: "invalid_api_key", 403: "permission_denied"}.get(status, "invalid_request_error")
    return {"error": {"message": message, "type": code, "code": code, "param": None}}


def _int(d: Any, key: str) -> int:
    v = d.get(key) if isinstance(d, dict) else None
    return int(v) if isinstance(v, (int, float)) else 0


def add_usage(api: str, obj: Any, u: Usage) -> None:
    """Fold the usage block of one JSON reply (or one SSE event) into `u`."""
    if not isinstance(obj, dict):
        return
    if api == "anthropic":
        block = obj.get("usage") or (obj.get("message") or {}).get("usage")
        if isinstance(block, dict):  # message_start carries input, message_delta the running output count
            u.seen = True
            u.input = _int(block, "input_tokens") or u.input
            u.cache_read = _int(block, "cache_read_input_tokens") or u.cache_read
            u.cache_write = _int(block, "cache_creation_input_tokens") or u.cache_write
            u.output = max(u.output, _int(block, "output_tokens"))
    elif api in ("responses", "chat"):
        block = obj.get("usage") or (obj.get("response") or {}).get("usage")
        if isinstance(block, dict):
            u.seen = True
            total_in = _int(block, "input_tokens") or _int(block, "prompt_tokens")
            details = block.get("input_tokens_details") or block.get("prompt_tokens_details") or {}
            u.cache_read = _int(details, "cached_tokens")
            u.input = max(0, total_in - u.cache_read)
            u.output = _int(block, "output_tokens") or _int(block, "completion_tokens")
    elif api == "gemini":
        block = obj.get("usageMetadata")
        if isinstance(block, dict):  # cumulative in every streamed chunk: the last one wins
            u.seen = True
            u.cache_read = _int(block, "cachedContentTokenCount")
            u.input = max(0, _int(block, "promptTokenCount") - u.cache_read)
            u.output = _int(block, "candidatesTokenCount") + _int(block, "thoughtsTokenCount")


@dataclass
class SseUsageScanner:
    """Reads usage out of an SSE stream as it passes, parsing only the few events that carry it.

    Most frames are text deltas without "usage"/"usageMetadata": a chunk without the bytes "usage"
    costs one search (not "sage": every "message_..." event would match it). Only lines that contain
    it are cut out and parsed (never a split of the whole chunk). Where the last usage block is the
    whole truth (OpenAI's final event, Gemini's cumulative counts) only the last such lines are
    parsed, at the end of the stream."""

    api: str
    usage: Usage = field(default_factory=Usage)
    _rest: bytes = b""
    _last: list[bytes] = field(default_factory=list)  # candidate lines, newest last (final-wins APIs)

    def feed(self, chunk: bytes) -> None:
        data = self._rest + chunk if self._rest else chunk
        cut = data.rfind(b"\n")
        if cut < 0:
            self._rest = data[-1_000_000:]
            return
        self._rest = data[cut + 1 :]
        at = data.find(_USAGE, 0, cut)
        while at >= 0:
            start = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at)
            line = data[start:end]
            if line.startswith(SSE_DATA):
                if self.api == "anthropic":  # message_start has the input, message_delta the output: both count
                    self._parse(line)
                else:
                    self._last.append(line)
                    del self._last[:-8]
            at = data.find(_USAGE, end, cut)

    def _parse(self, line: bytes) -> bool:
        try:
            obj = json.loads(line[len(SSE_DATA) :].decode())  # SSE is UTF-8: skips json's encoding sniffing
        except (ValueError, UnicodeDecodeError):
            return False
        seen = self.usage.seen
        self.usage.seen = False
        add_usage(self.api, obj, self.usage)
        found = self.usage.seen
        self.usage.seen = seen or found
        return found

    def close(self) -> None:
        self.feed(b"\n")
        for line in reversed(self._last):  # the newest line that really carries a usage block wins
            if self._parse(line):
                break
        self._last.clear()
