"""Why did an agent CLI fail? Classified from its parsed errors and the tail of its log.

Kinds (and whether a later retry may succeed): rate_limit (yes), overloaded (yes), auth (no),
quota (no), context_window (no), cli_crash (yes: a crash of the CLI itself, not of the model),
agent_exit (no: a non-zero exit with no recognised cause); cost_cap (no) is set by the trial's
gateway when it refused calls over the cost cap, not read from the log. The patterns come from the four CLIs'
real outputs (tests/testing/data/errors/); a CLI's own messages are its agent.yaml's `failure_patterns`,
tried first. Gemini reports an exhausted quota and a rate limit with
the same 429 RESOURCE_EXHAUSTED, so both read as rate_limit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from ptbench.agents.traces.model import Trajectory

RETRYABLE = {
    "rate_limit": True,
    "overloaded": True,
    "auth": False,
    "quota": False,
    "context_window": False,
    "cli_crash": True,
    "agent_exit": False,
    "cost_cap": False,
}

# Checked in this order: the first kind with a matching pattern wins.
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "context_window",
        re.compile(
            r"context window|prompt is too long|context_length_exceeded|maximum context length|ContextOverflowError"
            r"|exceeds the maximum number of tokens|too many tokens|context length",
            re.I,
        ),
    ),
    (
        "auth",
        re.compile(
            r"invalid api key|incorrect api key|api key not valid|invalid x-api-key|authentication_error|"
            r"authentication_failed|\b401\b|unauthorized|permission_denied|oauth token (has )?expired|not logged in|"
            r"please run /login",
            re.I,
        ),
    ),
    (
        "quota",
        re.compile(
            r"credit balance is too low|insufficient_quota|quota exceeded|billing_error|billing details|out of credits",
            re.I,
        ),
    ),
    (
        "rate_limit",
        re.compile(r"rate.?limit|\b429\b|too many requests|resource_exhausted|resource has been exhausted", re.I),
    ),
    (
        "overloaded",
        re.compile(
            r"overloaded|\b529\b|\b503\b|service unavailable|\bUNAVAILABLE\b|server_error|internal server error|"
            r"\b500\b",
            re.I,
        ),
    ),
]
_CRASH = re.compile(
    r"segmentation fault|core dumped|panicked at|fatal error|out of memory|uncaught exception|unhandled promise|"
    r"Traceback \(most recent",
    re.I,
)


@dataclass
class FailureInfo:
    kind: str
    retryable: bool
    message: str

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def _match(text: str, own: Sequence[tuple[str, re.Pattern[str]]] = ()) -> str | None:
    for kind, pattern in [*own, *_PATTERNS]:
        if pattern.search(text):
            return kind
    return None


def classify(
    traj: Trajectory, log_tail: str, exit_code: int | None, *, patterns: dict[str, list[str]] | None = None
) -> FailureInfo | None:
    """The failure of the last run, or None when it ended cleanly (exit 0 and no error result).
    `patterns`: the CLI's own (agent.yaml `failure_patterns`, kind -> regexes), tried before the shared ones."""
    own = [(kind, re.compile(p, re.I)) for kind, ps in (patterns or {}).items() for p in ps]
    last = traj.runs[-1] if traj.runs else None
    failed = (exit_code not in (0, None)) or (last is not None and last.is_error)
    if not failed:
        return None
    last_run = last.run if last else 1
    errors = [s.text or "" for s in traj.steps if s.kind == "error" and s.run == last_run]
    for text in reversed(errors):
        kind = _match(text, own)
        if kind:
            return FailureInfo(kind, RETRYABLE[kind], text[:500])
    lines = [ln for ln in log_tail.splitlines() if ln.strip()][-80:]
    tail = "\n".join(lines)
    if exit_code is not None and exit_code < 0:
        return FailureInfo("cli_crash", True, f"the CLI was killed by signal {-exit_code}")
    for ln in reversed(lines):
        kind = _match(ln, own)
        if kind:
            return FailureInfo(kind, RETRYABLE[kind], ln.strip()[:500])
    if _CRASH.search(tail):
        line = next((ln for ln in reversed(lines) if _CRASH.search(ln)), tail[-300:])
        return FailureInfo("cli_crash", True, line.strip()[:500])
    message = (errors[-1] if errors else (lines[-1] if lines else "")).strip()
    return FailureInfo("agent_exit", False, f"exit code {exit_code}" + (f": {message[:400]}" if message else ""))
