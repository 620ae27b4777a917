"""Gemini CLI `--output-format stream-json`."""

from __future__ import annotations

from typing import Any

from ptbench.agents.traces._builder import Builder, as_int
from ptbench.agents.traces.formats import register_trace_format
from ptbench.agents.traces.model import RunSummary, Usage


@register_trace_format("gemini-stream-json")
def parse_run(events: list[dict[str, Any]], b: Builder, summary: RunSummary) -> None:
    pending_text: list[str] = []
    last_ts = None

    def flush() -> None:
        if pending_text:
            text = "".join(pending_text)
            b.message(text, last_ts)
            summary.final_message = text
            pending_text.clear()

    for ev in events:
        typ = ev.get("type")
        if typ == "message" and ev.get("role") == "assistant":
            if not ev.get("delta"):
                flush()
            pending_text.append(str(ev.get("content") or ""))
            last_ts = ev.get("timestamp")
            continue
        flush()
        if typ == "init":
            summary.session_id = ev.get("session_id") or summary.session_id
            b.traj.model = ev.get("model") or b.traj.model
        elif typ == "tool_use":
            b.call(ev.get("tool_name", "?"), ev.get("parameters"), ev.get("tool_id"), ev.get("timestamp"))
        elif typ == "tool_result":
            err = ev.get("status") not in (None, "success")
            out = ev.get("output")
            if out is None and isinstance(ev.get("error"), dict):
                out = ev["error"].get("message")
            b.result(ev.get("tool_id"), out, error=err)
        elif typ == "error":
            b.traj.warnings.append(str(ev.get("message") or ev))
        elif typ == "result":
            stats = ev.get("stats") or {}
            summary.usage.add(
                Usage(
                    input_tokens=as_int(stats.get("input_tokens")),
                    output_tokens=as_int(stats.get("output_tokens")),
                    cache_read_tokens=as_int(stats.get("cached")),
                    by_model={
                        m: {k: v for k, v in s.items() if isinstance(v, (int, float))}
                        for m, s in (stats.get("models") or {}).items()
                    },
                )
            )
            if ev.get("status") != "success":
                summary.is_error = True
                failure = ev.get("error") or {}
                b.error(str(failure.get("message") if isinstance(failure, dict) else failure or "error"))
    flush()
