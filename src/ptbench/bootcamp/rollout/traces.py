"""The episode trace: one JSON line per episode, versioned. Built as plain dicts on the hot path and
validated with this model when read back (merge, SFT export)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ptbench.core.versioned import upgrade_tagged

TRACE_KIND, TRACE_VERSION = "ptbench.bootcamp.trace", 1
TRACE_SCHEMA = f"{TRACE_KIND}/{TRACE_VERSION}"


class ToolCallRecord(BaseModel):
    turn: int
    id: str | None = None
    name: str
    arguments: Any
    result: str
    step_reward: float = 0.0
    error: str | None = None
    latency_s: float = 0.0
    metrics: dict[str, Any] = Field(default_factory=dict)


class TurnScore(BaseModel):
    turn: int
    score: float
    terminate: bool
    extra: dict[str, Any] = Field(default_factory=dict)


class TraceError(BaseModel):
    kind: str
    message: str
    status: int | None = None
    retryable: bool = False
    attempts: int = 1


class Usage(BaseModel):
    prompt_tokens: int = 0
    """Summed over every model call (each call re-sends the history)."""
    completion_tokens: int = 0
    total_tokens: int = 0
    last_context_tokens: int = 0
    """Prompt + completion tokens of the last call: how long the conversation finally got."""


class EpisodeTrace(BaseModel):
    model_config = ConfigDict(extra="allow")

    schema_: str = Field(TRACE_SCHEMA, alias="schema")
    sample_id: str
    data_source: str
    split: str
    index: int
    level: str | None = None
    config_hash: str
    data_hash: str | None = None
    model: str
    status: Literal["ok", "error"]
    stop_reason: str
    messages: list[dict[str, Any]]
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    step_rewards: list[float] = Field(default_factory=list)
    turn_scores: list[TurnScore] = Field(default_factory=list)
    final_text: str | None = None
    extracted: str | None = None
    score: float | None = None
    """None when the episode failed: a failure is not a score of 0."""
    correct: bool | None = None
    turns: int = 0
    n_tool_calls: int = 0
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    model_latency_s: float = 0.0
    requests: int = 0
    retries: dict[str, int] = Field(default_factory=dict)
    error: TraceError | None = None
    attempt: int = 1
    started_at: float = 0.0
    tool_replica: dict[str, Any] | None = None
    """With tool-server replicas: the replica (index, job id, host, pid) that held the episode's tool state."""
    restarts: list[dict[str, Any]] = Field(default_factory=list)
    """With tool-server replicas: each time the episode lost its replica and was replayed from the
    start on another (reason, from_replica, to_replica, the turns/requests/seconds thrown away)."""


def is_final(record: dict[str, Any]) -> bool:
    """A record that resume must not redo: a success, or a failure that would fail again."""
    if record.get("status") == "ok":
        return True
    err = record.get("error") or {}
    return not err.get("retryable", True)


def current_trace(record: dict[str, Any], *, where: str) -> dict[str, Any]:
    """`record` at this trace version (core.versioned): a newer one is refused with one line, a
    record of another kind too; what reads traces as data (merge, SFT export) reads them through this."""
    return upgrade_tagged(record, kind=TRACE_KIND, current=TRACE_VERSION, where=where)
