"""Anthropic Messages API (POST /v1/messages), streamed (SSE) or not; /v1/messages/count_tokens."""

from __future__ import annotations

import json
from typing import Any

from ptbench.testing.player import AssistantItem, Reply, RequestView
from ptbench.testing.tools import ToolSpec
from ptbench.testing.wire._common import WireResponse, estimate_tokens, new_id, sse, text_of


def parse(body: dict[str, Any]) -> RequestView:
    tools = [ToolSpec(t.get("name", ""), "function", t.get("input_schema") or {}) for t in body.get("tools") or []]
    history: list[AssistantItem] = []
    outputs: list[str] = []
    texts = [text_of(body.get("system"))]
    pending: str | None = None
    for msg in body.get("messages") or []:
        pending = None
        content = msg.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for b in blocks:
            kind = b.get("type")
            if msg.get("role") == "assistant":
                if kind == "tool_use":
                    history.append(AssistantItem("tool_call", b.get("name", "")))
                elif kind == "text":
                    history.append(AssistantItem("text", b.get("text", "")))
            elif kind == "tool_result":
                outputs.append(pending := text_of(b.get("content")))
            elif kind == "text":
                texts.append(b.get("text", ""))
    schema = ((body.get("output_format") or {}).get("schema")) if isinstance(body.get("output_format"), dict) else None
    return RequestView.parsed(
        "anthropic", body, tools=tools, history=history, texts=texts, schema=schema, outputs=outputs, pending=pending
    )


def _blocks(reply: Reply) -> list[dict[str, Any]]:
    if reply.tool_call is not None:
        return [
            {
                "type": "tool_use",
                "id": new_id("toolu_"),
                "name": reply.tool_call.name,
                "input": reply.tool_call.arguments or {},
            }
        ]
    return [{"type": "text", "text": reply.text or ""}]


def respond(reply: Reply, view: RequestView) -> WireResponse:
    blocks = _blocks(reply)
    stop = "tool_use" if reply.tool_call is not None else "end_turn"
    out_tokens = estimate_tokens(blocks)
    usage = {
        "input_tokens": view.input_tokens,
        "output_tokens": out_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    message = {
        "id": new_id("msg_"),
        "type": "message",
        "role": "assistant",
        "model": view.model,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }
    if not view.stream:
        return WireResponse(body=message)
    start = dict(message, content=[], stop_reason=None, usage=dict(usage, output_tokens=1))
    events = [sse({"type": "message_start", "message": start}, "message_start")]
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            events.append(
                sse(
                    {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}},
                    "content_block_start",
                )
            )
            delta = {"type": "text_delta", "text": b["text"]}
        else:
            events.append(
                sse(
                    {"type": "content_block_start", "index": i, "content_block": dict(b, input={})},
                    "content_block_start",
                )
            )
            delta = {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}
        events.append(sse({"type": "content_block_delta", "index": i, "delta": delta}, "content_block_delta"))
        events.append(sse({"type": "content_block_stop", "index": i}, "content_block_stop"))
    events.append(
        sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": out_tokens},
            },
            "message_delta",
        )
    )
    events.append(sse({"type": "message_stop"}, "message_stop"))
    return WireResponse(events=events)


def count_tokens(body: dict[str, Any]) -> WireResponse:
    return WireResponse(body={"input_tokens": estimate_tokens(body)})


_ERRORS = {
    "rate_limit": (
        429,
        "rate_limit_error",
        "This request would exceed the rate limit for your organization of 50 requests per minute.",
    ),
    "overloaded": (529, "overloaded_error", "Overloaded"),
    "auth": (401, "authentication_error", "invalid x-api-key"),
    "quota": (
        400,
        "invalid_request_error",
        "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or "
        "purchase credits.",
    ),
    "context_length": (400, "invalid_request_error", "prompt is too long: 212345 tokens > 200000 maximum"),
    "server": (500, "api_error", "Internal server error"),
}


def error(kind: str, message: str | None) -> WireResponse:
    status, typ, text = _ERRORS[kind]
    return WireResponse(status=status, body={"type": "error", "error": {"type": typ, "message": message or text}})
