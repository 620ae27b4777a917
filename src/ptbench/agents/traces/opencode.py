"""OpenCode `opencode run --format json`."""

from __future__ import annotations

import json
from typing import Any

from ptbench.agents.traces._builder import Builder, as_int
from ptbench.agents.traces.formats import register_trace_format
from ptbench.agents.traces.model import RunSummary, Usage


@register_trace_format("opencode-json")
def parse_run(events: list[dict[str, Any]], b: Builder, summary: RunSummary) -> None:
    for ev in events:
        summary.session_id = ev.get("sessionID") or summary.session_id
        typ, part = ev.get("type"), ev.get("part") or {}
        if typ == "tool_use":
            state = part.get("state") or {}
            tc = b.call(part.get("tool", "?"), state.get("input"), part.get("callID"), ev.get("timestamp"))
            status = state.get("status")
            if status in ("completed", "error"):
                meta = state.get("metadata") or {}
                out = state.get("output") if status == "completed" else state.get("error")
                b.result(
                    tc.id,
                    out if isinstance(out, str) or out is None else json.dumps(out),
                    error=status == "error",
                    exit_code=meta.get("exit") if isinstance(meta.get("exit"), int) else None,
                )
        elif typ == "text":
            text = part.get("text", "")
            if b.message(text, ev.get("timestamp")):
                summary.final_message = text
        elif typ == "reasoning":
            b.message(part.get("text", ""), ev.get("timestamp"), kind="reasoning")
        elif typ == "step_finish":
            t = part.get("tokens") or {}
            cache = t.get("cache") or {}
            summary.usage.add(
                Usage(
                    input_tokens=as_int(t.get("input")),
                    output_tokens=as_int(t.get("output")),
                    reasoning_tokens=as_int(t.get("reasoning")),
                    cache_read_tokens=as_int(cache.get("read")),
                    cache_write_tokens=as_int(cache.get("write")),
                    cost_usd=float(part["cost"]) if isinstance(part.get("cost"), (int, float)) else None,
                )
            )
        elif typ == "error":
            summary.is_error = True
            err = ev.get("error") or {}
            data = err.get("data") or {}
            msg = data.get("message") or err.get("message") or err.get("name") or "error"
            b.error(
                f"{err.get('name', 'Error')}: {msg}"
                + (f" (status {data['statusCode']})" if data.get("statusCode") else "")
            )
