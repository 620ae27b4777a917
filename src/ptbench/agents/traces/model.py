"""The common trajectory format every agent's native log is parsed into (`agent/trajectory.json`)."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field

TRAJECTORY_SCHEMA = 1
RUN_MARKER_KEY = "ptbench_run"  # the harness writes {"ptbench_run": N, ...} into native.log before each run


class ToolCall(BaseModel):
    id: str | None = None
    name: str
    arguments: Any = None
    output: str | None = None
    status: Literal["ok", "error", "pending"] = "pending"
    exit_code: int | None = None


class Step(BaseModel):
    index: int
    run: int = 1
    kind: Literal["message", "tool_call", "reasoning", "error"]
    text: str | None = None
    tool_call: ToolCall | None = None
    timestamp: str | float | None = None


class Usage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float | None = None  # only when the CLI reports it
    by_model: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def add(self, other: Usage) -> None:
        for f in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens"):
            setattr(self, f, getattr(self, f) + getattr(other, f))
        if other.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + other.cost_usd
        for model, u in other.by_model.items():
            mine = self.by_model.setdefault(model, {})
            for k, v in u.items():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    mine[k] = mine.get(k, 0) + v

    def to_json(self, source: str) -> dict[str, Any]:
        return {**self.model_dump(), "total_tokens": self.total_tokens, "source": source}


class RunSummary(BaseModel):
    run: int
    mode: str = "start"  # start | continue | resume
    session_id: str | None = None
    final_message: str | None = None
    is_error: bool = False
    usage: Usage = Field(default_factory=Usage)


class Trajectory(BaseModel):
    schema_version: int = TRAJECTORY_SCHEMA
    agent: str
    model: str | None = None
    trace_format: str
    session_id: str | None = None
    steps: list[Step] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    final_message: str | None = None
    errors: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    runs: list[RunSummary] = Field(default_factory=list)
    unparsed_lines: int = 0  # non-JSON lines (stderr, banners)

    def tool_calls(self) -> list[ToolCall]:
        return [s.tool_call for s in self.steps if s.tool_call is not None]


def split_runs(text: str) -> list[tuple[dict[str, Any], list[dict[str, Any]], list[str]]]:
    """native.log -> [(run marker, JSON events, other lines)], one entry per run of the CLI."""
    runs: list[tuple[dict[str, Any], list[dict[str, Any]], list[str]]] = []
    current: tuple[dict[str, Any], list[dict[str, Any]], list[str]] = ({RUN_MARKER_KEY: 1, "mode": "start"}, [], [])
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        event = None
        if stripped.startswith("{"):
            try:
                event = json.loads(stripped)
            except json.JSONDecodeError:
                event = None
        if isinstance(event, dict) and RUN_MARKER_KEY in event:
            if current[1] or current[2]:
                runs.append(current)
            current = (event, [], [])
        elif isinstance(event, dict):
            current[1].append(event)
        else:
            current[2].append(line)
    if current[1] or current[2] or not runs:
        runs.append(current)
    return runs
