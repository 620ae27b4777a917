"""Claude Code `--output-format stream-json`."""

from __future__ import annotations

from typing import Any

from ptbench.agents.traces._builder import Builder, as_int, content_text
from ptbench.agents.traces.formats import register_trace_format
from ptbench.agents.traces.model import RunSummary, Usage


@register_trace_format("claude-stream-json")
def parse_run(events: list[dict[str, Any]], b: Builder, summary: RunSummary) -> None:
    result_seen = False
    for ev in events:
        typ = ev.get("type")
        summary.session_id = ev.get("session_id") or summary.session_id
        if typ == "system" and ev.get("subtype") == "init":
            b.traj.model = ev.get("model") or b.traj.model
        elif typ == "system" and ev.get("subtype") == "api_retry":
            b.traj.warnings.append(
                f"API retry {ev.get('attempt')}/{ev.get('max_retries')}: {ev.get('error_status')} {ev.get('error')}"
            )
        elif typ == "assistant":
            msg = ev.get("message") or {}
            if ev.get("error") and msg.get("model") == "<synthetic>":
                continue  # the error is reported again, in full, on the result line
            for block in msg.get("content") or []:
                kind = block.get("type")
                if kind == "text":
                    b.message(block.get("text", ""), ev.get("timestamp"))
                elif kind == "thinking":
                    b.message(block.get("thinking", ""), ev.get("timestamp"), kind="reasoning")
                elif kind in ("tool_use", "server_tool_use"):
                    b.call(block.get("name", "?"), block.get("input"), block.get("id"), ev.get("timestamp"))
        elif typ == "user":
            for block in (ev.get("message") or {}).get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    b.result(
                        block.get("tool_use_id"), content_text(block.get("content")), error=bool(block.get("is_error"))
                    )
        elif typ == "result" or ("total_cost_usd" in ev and "usage" in ev):
            result_seen = True
            u = ev.get("usage") or {}
            usage = Usage(
                input_tokens=as_int(u.get("input_tokens")),
                output_tokens=as_int(u.get("output_tokens")),
                cache_read_tokens=as_int(u.get("cache_read_input_tokens")),
                cache_write_tokens=as_int(u.get("cache_creation_input_tokens")),
                reasoning_tokens=as_int((u.get("output_tokens_details") or {}).get("thinking_tokens")),
                cost_usd=ev.get("total_cost_usd"),
                by_model={
                    m: {k: v for k, v in mu.items() if isinstance(v, (int, float))}
                    for m, mu in (ev.get("modelUsage") or {}).items()
                },
            )
            summary.usage.add(usage)
            summary.is_error = bool(ev.get("is_error"))
            text = ev.get("result")
            if summary.is_error:
                b.error(
                    str(text or ev.get("subtype") or "error")
                    + (f" (status {ev['api_error_status']})" if ev.get("api_error_status") else "")
                )
            elif text:
                summary.final_message = str(text)
    if not result_seen:
        # Killed before its result line: per-message usage snapshots are the best there is.
        for ev in events:
            if ev.get("type") == "assistant":
                u = (ev.get("message") or {}).get("usage") or {}
                summary.usage.input_tokens += as_int(u.get("input_tokens"))
                summary.usage.output_tokens += as_int(u.get("output_tokens"))
