"""The PostTrainBench evaluation protocol's generation lengths.

Each task is evaluated in up to three phases with decreasing max new tokens; a phase is a full
retry of generation *and* scoring, entered whenever the previous phase failed for any reason
(out of memory, a context-length error, a judge outage, a crash), and every phase is recorded in
the metrics. Each task states its phases (`TaskFacts.token_phases`, the reference system's numbers:
see docs/tasks.md).
"""

from __future__ import annotations


def token_phases(default: tuple[int, ...], *, max_new_tokens: int | None, retry: list[int] | None) -> tuple[int, ...]:
    """The phases for a task: its own (`default`), unless the task options override them.

    An explicit `max_new_tokens` without `retry_max_new_tokens` keeps the task's lower phases
    that are still below it, so a short smoke-test setting never retries with *more* tokens."""
    first = max_new_tokens or default[0]
    if retry is not None:
        return (first, *retry)
    return (first, *(t for t in default[1:] if t < first))
