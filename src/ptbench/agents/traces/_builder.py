"""Shared helpers for the per-CLI parsers."""

from __future__ import annotations

from typing import Any

from ptbench.agents.traces.model import Step, ToolCall, Trajectory


class Builder:
    """Appends steps to a trajectory and matches tool outputs to their calls by id."""

    def __init__(self, traj: Trajectory, run: int) -> None:
        self.traj = traj
        self.run = run
        self.calls: dict[str, ToolCall] = {}

    def message(self, text: str, timestamp: Any = None, *, kind: str = "message") -> Step | None:
        if not text:
            return None
        step = Step(index=len(self.traj.steps), run=self.run, kind=kind, text=text, timestamp=timestamp)
        self.traj.steps.append(step)
        return step

    def call(self, name: str, arguments: Any, call_id: str | None = None, timestamp: Any = None) -> ToolCall:
        if call_id and call_id in self.calls:
            tc = self.calls[call_id]
            tc.arguments = arguments if arguments not in (None, {}, "") else tc.arguments
            return tc
        tc = ToolCall(id=call_id, name=name, arguments=arguments)
        self.traj.steps.append(
            Step(index=len(self.traj.steps), run=self.run, kind="tool_call", tool_call=tc, timestamp=timestamp)
        )
        if call_id:
            self.calls[call_id] = tc
        return tc

    def result(
        self, call_id: str | None, output: str | None, *, error: bool = False, exit_code: int | None = None
    ) -> None:
        tc = self.calls.get(call_id or "")
        if tc is None:
            return
        tc.output = output
        tc.status = "error" if error or (exit_code not in (None, 0)) else "ok"
        tc.exit_code = exit_code

    def error(self, text: str, timestamp: Any = None) -> None:
        text = str(text)
        self.traj.errors.append(text)
        self.traj.steps.append(
            Step(index=len(self.traj.steps), run=self.run, kind="error", text=text, timestamp=timestamp)
        )


def as_int(v: Any) -> int:
    try:
        return int(v or 0)
    except (TypeError, ValueError):
        return 0


def content_text(content: Any) -> str:
    """Anthropic-style content (a string or a list of blocks) as plain text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict):
                parts.append(
                    str(block.get("text", "")) if block.get("type") in (None, "text") else f"[{block.get('type')}]"
                )
            else:
                parts.append(str(block))
        return "\n".join(p for p in parts if p)
    return "" if content is None else str(content)
