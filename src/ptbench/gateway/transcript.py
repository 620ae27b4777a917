"""The gateway's transcript: what every model call of the trial carried, kept by the harness.

`record/transcript.jsonl` in the trial directory (never bound into a sandbox), one line per
request and one per response, secrets redacted (the real keys and the trial token):

- request: `{"call", "dir": "request", "route", "api", "model", "conversation", "from", "of",
  "messages", ["system"], ["tools"]}` — only the messages that are new in this call: CLIs send the
  whole conversation each time, so each request is compared with the last one of the same
  conversation (same route, API, system prompt and first message) and only the messages after
  their common prefix are kept (`from`: the index of the first one kept, `of`: how many were sent).
  The system prompt and tool list are kept when they first appear or change.
- response: `{"call", "dir": "response", "route", "status", "text", "reasoning", "tool_calls": [{"name",
  "arguments"}], ["error"]}` — streams (SSE) are reassembled: text deltas joined, tool-call
  arguments put together from their fragments, for all four wire formats.

The gateway's event loop only hands the bytes over (a queue put per call); a thread of its own
parses, compares and writes, so a proxied call waits for none of it.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ptbench.core.fastjson import ascii_line, canonical, loads
from ptbench.gateway.wire import SSE_DATA

RECORDED_APIS = {"anthropic", "responses", "chat", "gemini"}
MAX_REPLY = 64 << 20  # bytes of one reply kept for the transcript (a longer one is cut and says so)
_CONVERSATIONS = 256  # conversations remembered for the comparison (least recently used dropped)
_CACHE_CONTROL = re.compile(rb'"cache_control"\s*:\s*\{[^{}]*\}\s*,?')


def _fingerprint(obj: Any) -> bytes:
    """A message's identity for the comparison: its JSON without cache markers (the CLIs move them)."""
    raw = canonical(obj)
    if b'"cache_control"' in raw:
        raw = _CACHE_CONTROL.sub(b"", raw)
    return hashlib.blake2b(raw, digest_size=16).digest()


def split_request(api: str, body: Any) -> tuple[Any, Any, list[Any]]:
    """(system prompt, tools, messages) of a request body in one of the four wire formats."""
    if not isinstance(body, dict):
        return None, None, []
    if api == "anthropic":
        system, messages = body.get("system"), body.get("messages")
    elif api == "chat":
        system, messages = None, body.get("messages")
    elif api == "responses":
        system, messages = body.get("instructions"), body.get("input")
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
    else:
        system, messages = body.get("systemInstruction"), body.get("contents")
    return system, body.get("tools"), messages if isinstance(messages, list) else []


class _Reply:
    """Text, reasoning and tool calls of one reply, assembled from whole replies or stream events."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[Any, dict[str, Any]] = {}  # key (index / item id) -> {"name", "arguments"}

    def call(self, key: Any, name: Any = None) -> dict[str, Any]:
        c = self.calls.setdefault(key, {"name": "", "arguments": ""})
        if isinstance(name, str) and name:
            c["name"] = name
        return c

    def add_args(self, key: Any, part: Any) -> None:
        if part is None:
            return
        c = self.call(key)
        c["arguments"] += part if isinstance(part, str) else json.dumps(part)

    def to_json(self) -> dict[str, Any]:
        return {
            "text": "".join(self.text),
            "reasoning": "".join(self.reasoning),
            "tool_calls": list(self.calls.values()),
        }


def _anthropic(obj: dict, r: _Reply) -> None:
    kind = obj.get("type")
    if kind == "message" or isinstance(obj.get("content"), list):
        for i, block in enumerate(obj.get("content") or []):
            _anthropic_block(block, ("m", i), r)
    elif kind == "content_block_start":
        _anthropic_block(obj.get("content_block") or {}, obj.get("index"), r)
    elif kind == "content_block_delta":
        d = obj.get("delta") or {}
        if d.get("type") == "text_delta":
            r.text.append(str(d.get("text", "")))
        elif d.get("type") == "thinking_delta":
            r.reasoning.append(str(d.get("thinking", "")))
        elif d.get("type") == "input_json_delta":
            r.add_args(obj.get("index"), d.get("partial_json", ""))


def _anthropic_block(block: dict, key: Any, r: _Reply) -> None:
    if not isinstance(block, dict):
        return
    t = block.get("type")
    if t == "text":
        r.text.append(str(block.get("text", "")))
    elif t in ("thinking", "redacted_thinking"):
        r.reasoning.append(str(block.get("thinking", "")))
    elif t in ("tool_use", "server_tool_use"):
        r.call(key, block.get("name"))
        if block.get("input"):
            r.add_args(key, block["input"])


def _chat(obj: dict, r: _Reply) -> None:
    for choice in obj.get("choices") or []:
        if not isinstance(choice, dict):
            continue
        m = choice.get("delta") or choice.get("message") or {}
        if isinstance(m.get("content"), str):
            r.text.append(m["content"])
        for field in ("reasoning_content", "reasoning"):
            if isinstance(m.get(field), str):
                r.reasoning.append(m[field])
        for j, tc in enumerate(m.get("tool_calls") or []):
            fn = tc.get("function") or {}
            key = (choice.get("index", 0), tc.get("index", j))
            r.call(key, fn.get("name"))
            r.add_args(key, fn.get("arguments"))


def _responses(obj: dict, r: _Reply) -> None:
    kind = str(obj.get("type", ""))
    if kind.endswith("output_text.delta"):
        r.text.append(str(obj.get("delta", "")))
    elif kind.endswith("reasoning_summary_text.delta") or kind.endswith("reasoning_text.delta"):
        r.reasoning.append(str(obj.get("delta", "")))
    elif kind.endswith("function_call_arguments.delta") or kind.endswith("custom_tool_call_input.delta"):
        r.add_args(obj.get("item_id") or obj.get("output_index"), obj.get("delta"))
    elif kind == "response.output_item.added":
        item = obj.get("item") or {}
        if item.get("type") in ("function_call", "custom_tool_call", "local_shell_call"):
            r.call(item.get("id") or obj.get("output_index"), item.get("name") or item.get("type"))
    elif "output" in obj and isinstance(obj.get("output"), list):  # a whole (non-streamed) response
        for item in obj["output"]:
            if not isinstance(item, dict):
                continue
            t = item.get("type")
            if t == "message":
                r.text += [str(c.get("text", "")) for c in item.get("content") or [] if isinstance(c, dict)]
            elif t == "reasoning":
                r.reasoning += [str(c.get("text", "")) for c in item.get("summary") or [] if isinstance(c, dict)]
            elif t in ("function_call", "custom_tool_call", "local_shell_call"):
                key = item.get("id") or item.get("call_id")
                r.call(key, item.get("name") or t)
                r.add_args(key, item.get("arguments") or item.get("input") or item.get("action"))


def _gemini(obj: dict, r: _Reply) -> None:
    for cand in obj.get("candidates") or []:
        parts = ((cand or {}).get("content") or {}).get("parts") or []
        for part in parts:
            if not isinstance(part, dict):
                continue
            if isinstance(part.get("text"), str):
                (r.reasoning if part.get("thought") else r.text).append(part["text"])
            fc = part.get("functionCall")
            if isinstance(fc, dict):
                key = len(r.calls)
                r.call(key, fc.get("name"))
                r.add_args(key, fc.get("args"))


_PARSERS: dict[str, Callable[[dict, _Reply], None]] = {
    "anthropic": _anthropic,
    "chat": _chat,
    "responses": _responses,
    "gemini": _gemini,
}


def parse_reply(api: str, body: bytes, sse: bool) -> dict[str, Any]:
    """Text, reasoning and tool calls of a reply (a JSON body, or an SSE stream put back together)."""
    r = _Reply()
    parse = _PARSERS[api]
    if sse:
        for line in body.split(b"\n"):
            if not line.startswith(SSE_DATA):
                continue
            try:
                obj = loads(line[len(SSE_DATA) :])
            except ValueError:
                continue
            if isinstance(obj, dict):
                parse(obj, r)
    else:
        obj = loads(body)
        for item in obj if isinstance(obj, list) else [obj]:  # Gemini streams a JSON array without alt=sse
            if isinstance(item, dict):
                parse(item, r)
    return r.to_json()


def _last_call(path: Path) -> int:
    try:
        data = path.read_bytes()
    except OSError:
        return 0
    return max((int(n) for n in re.findall(rb'\{"call": (\d+)', data)), default=0)


class Transcript:
    """Writes record/transcript.jsonl from a thread of its own (see the module's docstring)."""

    def __init__(self, path: str | os.PathLike[str], redact: Callable[[bytes], bytes] = lambda b: b) -> None:
        self.path = Path(path)
        self.redact = redact
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._next = _last_call(self.path)  # a resumed solve stage goes on numbering where the last one stopped
        self._fd: int | None = None
        self._conversations: OrderedDict[bytes, tuple[list[bytes], bytes, bytes]] = OrderedDict()
        self.failed: str | None = None  # why the transcript stopped being written, if it did

    def new_call(self) -> int:
        with self._lock:
            self._next += 1
            return self._next

    def request(self, call: int, route: str, api: str, model: str, raw: bytes, body: Any) -> None:
        if api in RECORDED_APIS:
            self._put(("request", call, route, api, model, raw, body))

    def response(
        self, call: int, route: str, api: str, status: int, sse: bool, parts: list[bytes] | bytes, cut: bool
    ) -> None:
        if api in RECORDED_APIS:
            self._put(("response", call, route, api, status, sse, parts, cut))

    def _put(self, item: tuple) -> None:
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name="gateway-transcript", daemon=True)
                    self._thread.start()
        self._queue.put(item)

    def close(self) -> None:
        """Write what is queued and stop the thread."""
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self.failed:  # the contamination check reads this: a transcript with holes is not clean evidence
            try:
                self.path.with_name(self.path.name + ".failed").write_text(self.failed + "\n")
            except OSError:
                pass

    # ----- the thread ---------------------------------------------------------------------------
    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            try:
                rec = self._request(*item[1:]) if item[0] == "request" else self._response(*item[1:])
            except Exception as exc:  # noqa: BLE001  (one odd body must not end the record of the others)
                self.failed = f"{type(exc).__name__}: {exc}"
                rec = {"call": item[1], "dir": item[0], "route": item[2], "unrecorded": self.failed[:300]}
            try:
                self._write(rec)
            except OSError as exc:  # a full disk: what follows is lost, and the check is told by its absence
                self.failed = f"{type(exc).__name__}: {exc}"

    def _write(self, rec: dict[str, Any]) -> None:
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.write(self._fd, self.redact(ascii_line(rec)))

    def _request(self, call: int, route: str, api: str, model: str, raw: bytes, body: Any) -> dict[str, Any]:
        if body is None:
            body = loads(raw) if raw else None
        system, tools, messages = split_request(api, body)
        prints = [_fingerprint(m) for m in messages]
        sys_print, tools_print = _fingerprint(system), _fingerprint(tools)
        key = hashlib.blake2b(
            f"{route}\0{api}\0".encode() + sys_print + (prints[0] if prints else b""), digest_size=8
        ).digest()
        old, old_sys, old_tools = self._conversations.pop(key, ([], b"", b""))
        same = 0
        for a, b in zip(old, prints, strict=False):
            if a != b:
                break
            same += 1
        self._conversations[key] = (prints, sys_print, tools_print)
        while len(self._conversations) > _CONVERSATIONS:
            self._conversations.popitem(last=False)
        rec: dict[str, Any] = {
            "call": call,
            "dir": "request",
            "route": route,
            "api": api,
            "model": model,
            "conversation": key.hex(),
            "from": same,
            "of": len(messages),
            "messages": messages[same:],
        }
        if system is not None and sys_print != old_sys:
            rec["system"] = system
        if tools is not None and tools_print != old_tools:
            rec["tools"] = tools
        return rec

    def _response(
        self, call: int, route: str, api: str, status: int, sse: bool, parts: list[bytes] | bytes, cut: bool
    ) -> dict[str, Any]:
        body = parts if isinstance(parts, bytes) else b"".join(parts)
        rec: dict[str, Any] = {"call": call, "dir": "response", "route": route, "status": status}
        if cut:
            rec["cut"] = f"the reply was longer than {MAX_REPLY} bytes; the rest is not recorded"
        if status >= 400 or status < 0:
            rec["error"] = body[:4000].decode("utf-8", "replace")
            return rec
        try:
            rec.update(parse_reply(api, body, sse))
        except ValueError:
            rec["unparsed"] = body[:4000].decode("utf-8", "replace")
        return rec
