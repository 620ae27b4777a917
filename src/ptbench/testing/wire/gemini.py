"""Gemini API: models/{m}:streamGenerateContent (SSE with alt=sse), :generateContent, :countTokens."""

from __future__ import annotations

from typing import Any

from ptbench.testing.player import AssistantItem, Reply, RequestView
from ptbench.testing.tools import ToolSpec
from ptbench.testing.wire._common import WireResponse, estimate_tokens, new_id, sse, text_of


def parse(body: dict[str, Any], model: str, stream: bool) -> RequestView:
    tools = []
    for group in body.get("tools") or []:
        for fn in group.get("functionDeclarations") or group.get("function_declarations") or []:
            schema = fn.get("parametersJsonSchema") or fn.get("parameters") or {}
            tools.append(ToolSpec(fn.get("name", ""), "function", schema))
    history: list[AssistantItem] = []
    outputs: list[str] = []
    texts = [text_of((body.get("systemInstruction") or body.get("system_instruction") or {}).get("parts"))]
    pending: str | None = None
    for content in body.get("contents") or []:
        pending = None
        for part in content.get("parts") or []:
            if content.get("role") == "model":
                if "functionCall" in part:
                    history.append(AssistantItem("tool_call", part["functionCall"].get("name", "")))
                elif "text" in part and not part.get("thought"):
                    history.append(AssistantItem("text", part["text"]))
            elif "functionResponse" in part:
                outputs.append(pending := text_of(part["functionResponse"].get("response")))
            elif "text" in part:
                texts.append(part["text"])
    cfg = body.get("generationConfig") or body.get("generation_config") or {}
    schema = cfg.get("responseJsonSchema") or cfg.get("responseSchema")
    if schema is None and cfg.get("responseMimeType") == "application/json":
        schema = {"type": "object"}
    return RequestView.parsed(
        "gemini",
        body,
        tools=tools,
        history=history,
        texts=texts,
        schema=schema,
        outputs=outputs,
        pending=pending,
        model=model,
        stream=stream,
    )


def _response(reply: Reply, view: RequestView) -> dict[str, Any]:
    if reply.tool_call is not None:
        part: dict[str, Any] = {"functionCall": {"name": reply.tool_call.name, "args": reply.tool_call.arguments or {}}}
    else:
        part = {"text": reply.text or ""}
    out_tokens = estimate_tokens(part)
    return {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {
            "promptTokenCount": view.input_tokens,
            "candidatesTokenCount": out_tokens,
            "totalTokenCount": view.input_tokens + out_tokens,
        },
        "modelVersion": view.model,
        "responseId": new_id(""),
    }


def respond(reply: Reply, view: RequestView, sse_stream: bool = True) -> WireResponse:
    body = _response(reply, view)
    if not view.stream:
        return WireResponse(body=body)
    if not sse_stream:  # streamGenerateContent without alt=sse answers a JSON array
        return WireResponse(body=[body])
    return WireResponse(events=[sse(body)])


def count_tokens(body: dict[str, Any]) -> WireResponse:
    return WireResponse(body={"totalTokens": estimate_tokens(body)})


_ERRORS = {
    "rate_limit": (429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
    "overloaded": (503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
    "auth": (400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key."),
    "quota": (
        429,
        "RESOURCE_EXHAUSTED",
        "You exceeded your current quota, please check your plan and billing details.",
    ),
    "context_length": (
        400,
        "INVALID_ARGUMENT",
        "The input token count (1212345) exceeds the maximum number of tokens allowed (1048576).",
    ),
    "server": (
        500,
        "INTERNAL",
        "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
    ),
}


def error(kind: str, message: str | None) -> WireResponse:
    status, code, text = _ERRORS[kind]
    return WireResponse(status=status, body={"error": {"code": status, "message": message or text, "status": code}})
