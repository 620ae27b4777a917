"""Codex CLI `codex exec --json`."""

from __future__ import annotations

from typing import Any

from ptbench.agents.traces._builder import Builder, as_int
from ptbench.agents.traces.formats import register_trace_format
from ptbench.agents.traces.model import RunSummary, Usage


@register_trace_format("codex-json")
def parse_run(events: list[dict[str, Any]], b: Builder, summary: RunSummary) -> None:
    for ev in events:
        typ = ev.get("type")
        if typ == "thread.started":
            summary.session_id = ev.get("thread_id") or summary.session_id
        elif typ in ("item.started", "item.updated", "item.completed"):
            item = ev.get("item") or {}
            kind, iid = item.get("type"), item.get("id")
            done = typ == "item.completed"
            if kind == "command_execution":
                b.call("shell", {"command": item.get("command")}, iid)
                if done or item.get("status") in ("completed", "failed"):
                    b.result(
                        iid,
                        item.get("aggregated_output"),
                        error=item.get("status") == "failed",
                        exit_code=item.get("exit_code"),
                    )
            elif kind == "file_change":
                b.call("file_change", {"changes": item.get("changes")}, iid)
                if done:
                    b.result(iid, item.get("status"), error=item.get("status") == "failed")
            elif kind == "mcp_tool_call":
                b.call(f"{item.get('server')}.{item.get('tool')}", item.get("arguments"), iid)
                if done:
                    b.result(iid, str(item.get("result") or item.get("error") or ""), error=bool(item.get("error")))
            elif kind == "web_search" and done:
                b.call("web_search", {"query": item.get("query")}, iid)
                b.result(iid, None)
            elif kind == "agent_message" and done:
                b.message(item.get("text", ""))
                summary.final_message = item.get("text") or summary.final_message
            elif kind == "reasoning" and done:
                b.message(item.get("text", ""), kind="reasoning")
            elif kind == "error" and done:
                b.traj.warnings.append(str(item.get("message")))  # codex reports warnings as error items
        elif typ == "turn.completed":
            u = ev.get("usage") or {}
            summary.usage.add(
                Usage(
                    input_tokens=as_int(u.get("input_tokens")),
                    output_tokens=as_int(u.get("output_tokens")),
                    cache_read_tokens=as_int(u.get("cached_input_tokens")),
                    cache_write_tokens=as_int(u.get("cache_write_input_tokens")),
                    reasoning_tokens=as_int(u.get("reasoning_output_tokens")),
                )
            )
        elif typ == "turn.failed":
            summary.is_error = True
            b.error(str((ev.get("error") or {}).get("message") or "turn failed"))
        elif typ == "error":
            msg = str(ev.get("message") or "")
            if msg.startswith("Reconnecting"):
                b.traj.warnings.append(msg)
            elif not any(msg == e for e in b.traj.errors):
                b.error(msg)
