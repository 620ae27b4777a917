"""mini-swe-agent through agents/mini-swe-agent/driver.py: one JSON line per message mini-swe-agent adds.

Events: `session` (id, version), `message` (role assistant with `tool_calls` [{id, command}] and the
API's `usage`; role tool with `output` and `returncode`; role user, a format error when it has
`interrupt_type`, with the `reply` that had no tool call and its `usage`; role exit with
`exit_status`), `exit` (the run's end) and `error` (the driver failed).
"""

from __future__ import annotations

from typing import Any

from ptbench.agents.traces._builder import Builder, as_int, content_text
from ptbench.agents.traces.formats import register_trace_format
from ptbench.agents.traces.model import RunSummary, Usage

# mini-swe-agent's own ends of a run; any other exit status is an exception's class name
CLEAN_EXITS = ("Submitted", "LimitsExceeded", "TimeExceeded", "RepeatedFormatError")


def _usage(u: dict[str, Any]) -> Usage:
    details = u.get("prompt_tokens_details") or {}
    out_details = u.get("completion_tokens_details") or {}
    return Usage(
        input_tokens=as_int(u.get("prompt_tokens")),
        output_tokens=as_int(u.get("completion_tokens")),
        cache_read_tokens=as_int(details.get("cached_tokens") if isinstance(details, dict) else 0),
        reasoning_tokens=as_int(out_details.get("reasoning_tokens") if isinstance(out_details, dict) else 0),
    )


@register_trace_format("mini-swe-json")
def parse_run(events: list[dict[str, Any]], b: Builder, summary: RunSummary) -> None:
    last_text = ""
    for ev in events:
        typ, ts = ev.get("type"), ev.get("timestamp")
        if typ == "session":
            summary.session_id = ev.get("session_id") or summary.session_id
        elif typ == "error":  # the driver's last word; the same text as the exit message's, if it had one
            summary.is_error = True
            text = str(ev.get("message") or "mini-swe-agent failed")
            if text not in b.traj.errors:
                b.error(text)
        elif typ == "exit":
            summary.session_id = ev.get("session_id") or summary.session_id
            submission = str(ev.get("submission") or "").strip()
            summary.final_message = submission or last_text or f"mini-swe-agent exited: {ev.get('exit_status')}"
        elif typ == "message":
            role = ev.get("role")
            if role == "assistant":
                text = content_text(ev.get("content")).strip()
                if text:
                    b.message(text, ts)
                    last_text = text
                for call in ev.get("tool_calls") or []:
                    b.call("bash", {"command": call.get("command")}, call.get("id"), ts)
                if isinstance(ev.get("usage"), dict):
                    summary.usage.add(_usage(ev["usage"]))
            elif role == "tool":
                code = ev.get("returncode")
                b.result(
                    ev.get("tool_call_id"),
                    ev.get("output"),
                    error=bool(ev.get("exception_info")),
                    exit_code=code if isinstance(code, int) else None,
                )
            elif role == "user" and ev.get("interrupt_type"):  # mini's format errors go back to the model
                if reply := content_text(ev.get("reply")).strip():  # the reply without a tool call
                    b.message(reply, ts)
                    last_text = reply
                if isinstance(ev.get("usage"), dict):  # that reply's tokens
                    summary.usage.add(_usage(ev["usage"]))
                b.traj.warnings.append(f"{ev['interrupt_type']}: {content_text(ev.get('content'))[:300]}")
            elif role == "exit":
                status = str(ev.get("exit_status") or "")
                if status == "Submitted":  # the submitting command ends the run before its output is added
                    for call_id, tc in b.calls.items():
                        if tc.status == "pending":
                            text = content_text(ev.get("content"))
                            b.result(call_id, f"COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n{text}", exit_code=0)
                if status and status not in CLEAN_EXITS:
                    summary.is_error = True
                    b.error(f"{status}: {content_text(ev.get('content'))}", ts)
