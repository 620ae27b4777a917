"""Decide the reply to one request: the next scripted turn, a side reply, or an API error.

The position in the script is read from the conversation itself (how many of our replies it already
holds), not from a server-side counter. So a retried request gets the same reply, side requests
(titles, summaries, next-speaker checks) never consume turns, and a resumed session continues the
script where it stopped.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any, Literal

from ptbench.testing.script import ApiError, Script, Turn
from ptbench.testing.tools import POLL_TOOLS, ToolCall, ToolSpec, can_act, find_cwd, poll_call, to_tool_call
from ptbench.testing.wire._common import estimate_tokens


@dataclass
class AssistantItem:
    """One item of an earlier model reply found in the request's history."""

    kind: Literal["text", "tool_call"]
    text: str = ""


@dataclass
class RequestView:
    """What the player needs from a request, whatever its wire format."""

    api: str
    model: str
    stream: bool
    tools: list[ToolSpec]
    history: list[AssistantItem]
    text: str  # system prompt and messages, concatenated (cwd detection)
    json_schema: dict[str, Any] | None = None  # structured output requested
    tool_outputs: list[str] = field(default_factory=list)
    pending_output: str | None = None  # the tool result the request ends with, if it ends with one
    input_tokens: int = 0

    @classmethod
    def parsed(
        cls,
        api: str,
        body: dict[str, Any],
        *,
        tools: list[ToolSpec],
        history: list[AssistantItem],
        texts: list[str],
        schema: dict[str, Any] | None,
        outputs: list[str],
        pending: str | None,
        model: str | None = None,
        stream: bool | None = None,
    ) -> RequestView:
        """The view a wire parser found; model and stream come from the body unless the URL says them (Gemini)."""
        return cls(
            api=api,
            model=str(body.get("model", "")) if model is None else model,
            stream=bool(body.get("stream")) if stream is None else stream,
            tools=tools,
            history=history,
            text="\n".join(texts),
            json_schema=schema,
            tool_outputs=outputs,
            pending_output=pending,
            input_tokens=estimate_tokens(body),
        )


@dataclass
class Reply:
    role: Literal["script", "side", "after_end", "error"]
    turn: int | None = None  # index in Script.turns
    text: str | None = None
    tool_call: ToolCall | None = None
    error: ApiError | None = None
    delay_s: float = 0.0

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "turn": self.turn}
        if self.text is not None:
            out["text"] = self.text
        if self.tool_call is not None:
            tc = self.tool_call
            out["tool_call"] = {"name": tc.name, "kind": tc.kind, "arguments": tc.arguments, "input": tc.raw_input}
        if self.error is not None:
            out["error"] = self.error.kind
        return out


def _schema_example(schema: dict[str, Any]) -> Any:
    """A minimal instance of a JSON schema (Gemini's OBJECT/STRING spellings included)."""
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    typ = str(schema.get("type", "object")).lower()
    if isinstance(schema.get("type"), list):
        typ = str(next((t for t in schema["type"] if t != "null"), "string")).lower()
    if typ == "object":
        props = schema.get("properties") or {}
        keys = schema.get("required") or list(props)
        return {k: _schema_example(props.get(k) or {}) for k in keys}
    if typ == "array":
        return []
    if typ in ("integer", "number"):
        return 0
    if typ == "boolean":
        return False
    return "Scripted"


class Player:
    def __init__(self, script: Script) -> None:
        self.script = script
        self._errors_served: dict[int, int] = {}
        self._lock = threading.Lock()
        self._messages = {t.message.strip() for t in script.turns if t.message is not None}

    def _played(self, view: RequestView) -> int:
        """How many scripted replies the conversation already holds."""
        n = 0
        for item in view.history:
            if item.kind == "tool_call" and item.text in POLL_TOOLS:
                continue  # our own polls of a still-running command are not script turns
            if item.kind == "tool_call" or item.text.strip() in self._messages:
                n += 1
        return n

    def decide(self, view: RequestView) -> Reply:
        if not can_act(view.tools):
            return self._side(view)
        poll = poll_call(view)
        if poll is not None:
            return Reply("script", tool_call=poll)
        played = self._played(view)
        replies = [(i, t) for i, t in enumerate(self.script.turns) if t.error is None]
        if played >= len(replies):
            return Reply("after_end", text=self.script.after_end)
        index, turn = replies[played]
        pending = self._pending_error(index)
        if pending is not None:
            return pending
        return self._play(index, turn, view)

    def _pending_error(self, reply_index: int) -> Reply | None:
        """The first unexhausted error turn directly before this reply, counted as served."""
        i = reply_index - 1
        errors: list[int] = []
        while i >= 0 and self.script.turns[i].error is not None:
            errors.insert(0, i)
            i -= 1
        with self._lock:
            for e in errors:
                turn = self.script.turns[e]
                served = self._errors_served.get(e, 0)
                if turn.times is None or served < turn.times:
                    self._errors_served[e] = served + 1
                    return Reply("error", turn=e, error=turn.error, delay_s=turn.delay_s)
        return None

    def _play(self, index: int, turn: Turn, view: RequestView) -> Reply:
        if turn.message is not None:
            return Reply("script", turn=index, text=turn.message, delay_s=turn.delay_s)
        call = to_tool_call(turn, view.tools, find_cwd(view.text))
        return Reply("script", turn=index, tool_call=call, delay_s=turn.delay_s)

    def _side(self, view: RequestView) -> Reply:
        if view.json_schema is not None:
            return Reply("side", text=json.dumps(_schema_example(view.json_schema)))
        return Reply("side", text=self.script.side_reply)
