"""The PostTrainBench evaluation protocol's generation lengths, in one place.

Each task is evaluated in up to three phases with decreasing max new tokens; a phase is a full
retry of generation *and* scoring, entered whenever the previous phase failed for any reason
(out of memory, a context-length error, a judge outage, a crash), and every phase is recorded in
the metrics. The numbers are the reference system's (see docs/tasks.md).
"""

from __future__ import annotations

TOKEN_PHASES: dict[str, tuple[int, ...]] = {
    "aime2025": (16000, 12000, 8000),
    "gpqa": (16000, 12000, 8000),
    "bfcl": (16000, 12000, 8000),
    "gsm8k": (4000, 3000, 2000),
    "humaneval": (4000, 3000, 2000),
    "arena_hard_writing": (16384, 12288, 8192),
    "healthbench_easy": (16384, 12288, 8192),
}


def token_phases(
    task_name: str, *, max_new_tokens: int | None, retry: list[int] | None, fallback: tuple[int, ...]
) -> tuple[int, ...]:
    """The phases for a task: the protocol's, unless the task options override them.

    An explicit `max_new_tokens` without `retry_max_new_tokens` keeps the protocol's lower phases
    that are still below it, so a short smoke-test setting never retries with *more* tokens."""
    default = TOKEN_PHASES.get(task_name, fallback)
    first = max_new_tokens or default[0]
    if retry is not None:
        return (first, *retry)
    return (first, *(t for t in default[1:] if t < first))
