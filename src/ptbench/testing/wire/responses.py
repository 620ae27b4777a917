"""OpenAI Responses API (POST /v1/responses), streamed (SSE) or not. Errors reuse Chat's bodies."""

from __future__ import annotations

import json
from typing import Any

from ptbench.testing.player import AssistantItem, Reply, RequestView
from ptbench.testing.tools import ToolSpec
from ptbench.testing.wire._common import WireResponse, estimate_tokens, new_id, now, sse, text_of
from ptbench.testing.wire.chat import error as error  # same error bodies as Chat Completions

_CALLS = ("function_call", "custom_tool_call", "local_shell_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")


def _tool(t: dict[str, Any]) -> ToolSpec | None:
    typ = t.get("type", "function")
    if typ == "function":
        return ToolSpec(t.get("name", ""), "function", t.get("parameters") or {})
    if typ == "custom":
        return ToolSpec(t.get("name", ""), "custom", {})
    if typ == "local_shell":
        return ToolSpec("local_shell", "local_shell", {})
    return None  # hosted tools (web_search, ...) cannot be scripted


def parse(body: dict[str, Any]) -> RequestView:
    tools = [s for s in (_tool(t) for t in body.get("tools") or []) if s is not None]
    history: list[AssistantItem] = []
    outputs: list[str] = []
    texts = [text_of(body.get("instructions"))]
    items = body.get("input")
    items = [{"type": "message", "role": "user", "content": items}] if isinstance(items, str) else items or []
    pending: str | None = None
    for item in items:
        typ = item.get("type", "message")
        pending = None
        if typ in _CALLS:
            history.append(AssistantItem("tool_call", item.get("name", typ)))
        elif typ in _OUTPUTS:
            outputs.append(pending := text_of(item.get("output")))
        elif typ == "message" and item.get("role") == "assistant":
            history.append(AssistantItem("text", text_of(item.get("content"))))
        elif typ == "message":
            texts.append(text_of(item.get("content")))
    fmt = (body.get("text") or {}).get("format") or {}
    schema = fmt.get("schema") if fmt.get("type") == "json_schema" else None
    return RequestView.parsed(
        "responses", body, tools=tools, history=history, texts=texts, schema=schema, outputs=outputs, pending=pending
    )


def _item(reply: Reply) -> dict[str, Any]:
    tc = reply.tool_call
    if tc is None:
        return {
            "type": "message",
            "id": new_id("msg_"),
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": reply.text or "", "annotations": []}],
        }
    base = {"id": new_id("fc_"), "call_id": new_id("call_"), "status": "completed"}
    if tc.kind == "custom":
        return dict(base, type="custom_tool_call", name=tc.name, input=tc.raw_input or "")
    if tc.kind == "local_shell":
        return dict(base, type="local_shell_call", action=tc.arguments)
    return dict(base, type="function_call", name=tc.name, arguments=json.dumps(tc.arguments or {}))


def respond(reply: Reply, view: RequestView) -> WireResponse:
    item = _item(reply)
    out_tokens = estimate_tokens(item)
    usage = {
        "input_tokens": view.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": out_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": view.input_tokens + out_tokens,
    }
    response = {
        "id": new_id("resp_"),
        "object": "response",
        "created_at": now(),
        "status": "completed",
        "model": view.model,
        "output": [item],
        "usage": usage,
        "error": None,
        "incomplete_details": None,
    }
    if not view.stream:
        return WireResponse(body=response)
    seq = iter(range(1_000_000))

    def ev(kind: str, **data: Any) -> str:
        return sse({"type": kind, "sequence_number": next(seq), **data}, kind)

    pending = dict(response, status="in_progress", output=[], usage=None)
    events = [ev("response.created", response=pending), ev("response.in_progress", response=pending)]
    if item["type"] == "message":
        text = item["content"][0]["text"]
        empty = dict(item, status="in_progress", content=[])
        part = {"type": "output_text", "text": "", "annotations": []}
        at = {"item_id": item["id"], "output_index": 0, "content_index": 0}
        events += [
            ev("response.output_item.added", output_index=0, item=empty),
            ev("response.content_part.added", part=part, **at),
            ev("response.output_text.delta", delta=text, **at),
            ev("response.output_text.done", text=text, **at),
            ev("response.content_part.done", part=dict(part, text=text), **at),
        ]
    else:
        events.append(ev("response.output_item.added", output_index=0, item=dict(item, status="in_progress")))
        if item["type"] == "function_call":
            at = {"item_id": item["id"], "output_index": 0}
            events += [
                ev("response.function_call_arguments.delta", delta=item["arguments"], **at),
                ev("response.function_call_arguments.done", arguments=item["arguments"], **at),
            ]
    events.append(ev("response.output_item.done", output_index=0, item=item))
    events.append(ev("response.completed", response=response))
    return WireResponse(events=events)
