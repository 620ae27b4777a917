"""OpenAI Chat Completions (POST /v1/chat/completions), streamed (SSE) or not."""

from __future__ import annotations

import json
from typing import Any

from ptbench.testing.player import AssistantItem, Reply, RequestView
from ptbench.testing.tools import ToolSpec
from ptbench.testing.wire._common import WireResponse, estimate_tokens, new_id, now, sse, text_of


def parse(body: dict[str, Any]) -> RequestView:
    tools = []
    for t in body.get("tools") or []:
        fn = t.get("function") or {}
        tools.append(ToolSpec(fn.get("name", ""), "function", fn.get("parameters") or {}))
    history: list[AssistantItem] = []
    outputs: list[str] = []
    texts: list[str] = []
    pending: str | None = None
    for msg in body.get("messages") or []:
        role = msg.get("role")
        pending = None
        if role == "assistant":
            if msg.get("content"):
                history.append(AssistantItem("text", text_of(msg.get("content"))))
            for tc in msg.get("tool_calls") or []:
                history.append(AssistantItem("tool_call", (tc.get("function") or {}).get("name", "")))
        elif role == "tool":
            outputs.append(pending := text_of(msg.get("content")))
        else:
            texts.append(text_of(msg.get("content")))
    fmt = body.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema") if fmt.get("type") == "json_schema" else None
    if fmt.get("type") == "json_object":
        schema = {"type": "object"}
    return RequestView.parsed(
        "chat", body, tools=tools, history=history, texts=texts, schema=schema, outputs=outputs, pending=pending
    )


def respond(reply: Reply, view: RequestView) -> WireResponse:
    rid, created = new_id("chatcmpl-"), now()
    tool_calls = None
    if reply.tool_call is not None:
        tool_calls = [
            {
                "id": new_id("call_"),
                "type": "function",
                "function": {"name": reply.tool_call.name, "arguments": json.dumps(reply.tool_call.arguments or {})},
            }
        ]
    finish = "tool_calls" if tool_calls else "stop"
    out_tokens = estimate_tokens(tool_calls or reply.text or "")
    usage = {
        "prompt_tokens": view.input_tokens,
        "completion_tokens": out_tokens,
        "total_tokens": view.input_tokens + out_tokens,
    }
    if not view.stream:
        message: dict[str, Any] = {"role": "assistant", "content": None if tool_calls else (reply.text or "")}
        if tool_calls:
            message["tool_calls"] = tool_calls
        return WireResponse(
            body={
                "id": rid,
                "object": "chat.completion",
                "created": created,
                "model": view.model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage,
            }
        )

    def chunk(delta: dict[str, Any], finish_reason: str | None = None, **extra: Any) -> str:
        return sse(
            {
                "id": rid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": view.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
                **extra,
            }
        )

    events = [chunk({"role": "assistant", "content": ""})]
    if tool_calls:
        events.append(chunk({"tool_calls": [dict(tool_calls[0], index=0)]}))
    else:
        events.append(chunk({"content": reply.text or ""}))
    events.append(chunk({}, finish, usage=usage))
    events.append("data: [DONE]\n\n")
    return WireResponse(events=events)


def models() -> WireResponse:
    return WireResponse(
        body={"object": "list", "data": [{"id": "scripted", "object": "model", "created": 0, "owned_by": "ptbench"}]}
    )


_ERRORS = {
    "rate_limit": (429, "rate_limit_exceeded", "requests", "Rate limit reached for requests. Please try again in 20s."),
    "overloaded": (503, "server_overloaded", "server_error", "The server is overloaded. Please try again later."),
    "auth": (
        401,
        "invalid_api_key",
        "invalid_request_error",
        "Incorrect API key provided: sk-***. You can find your API key at https://platform.openai.com/account/api-keys.",
    ),
    "quota": (
        429,
        "insufficient_quota",
        "insufficient_quota",
        "You exceeded your current quota, please check your plan and billing details.",
    ),
    "context_length": (
        400,
        "context_length_exceeded",
        "invalid_request_error",
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 212345 tokens. "
        "Please reduce the length of the messages.",
    ),
    "server": (500, "server_error", "server_error", "The server had an error while processing your request."),
}


def error(kind: str, message: str | None) -> WireResponse:
    status, code, typ, text = _ERRORS[kind]
    return WireResponse(
        status=status, body={"error": {"message": message or text, "type": typ, "param": None, "code": code}}
    )
