"""A benchmark's test set as text segments, through the task's own loader (so `data_path`,
`PTBENCH_DATA_DIR`, pinned revisions and filtering are exactly the evaluation's)."""

from __future__ import annotations

import json
from typing import Any

from ptbench.core.errors import UserError
from ptbench.integrity.contamination.index import TestIndex
from ptbench.integrity.report import Unchecked
from ptbench.tasks import get_task


def _texts(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _texts(v)]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _texts(v)]
    if isinstance(value, (int, float)):
        return [str(value)]
    return [json.dumps(value, default=str)]


def _question(prompt: Any) -> str:
    if isinstance(prompt, list):  # chat messages
        return "\n".join(str(m.get("content", "")) for m in prompt if isinstance(m, dict))
    return "\n".join(_texts(prompt))


def add_test_set(index: TestIndex, task_name: str, options: dict[str, Any]) -> int:
    """Add every test item of a task; Unchecked when the test set cannot be loaded."""
    try:
        task = get_task(task_name, **options)
        examples = task.test_examples()
        extra = task.contamination_answers()  # reference texts the Examples do not carry (the task's fact)
    except (UserError, OSError, ValueError, KeyError, ImportError) as exc:
        raise Unchecked(f"test set of task '{task_name}' unavailable ({type(exc).__name__}: {exc})") from None
    if not examples:
        raise Unchecked(f"test set of task '{task_name}' is empty")
    for i, ex in enumerate(examples):
        parts = [("question", _question(ex.prompt))]
        parts += [("answer", t) for t in _texts(ex.reference)]
        if extra is not None and i < len(extra):
            parts.append(("answer", extra[i]))
        parts += [("context", t) for t in _texts(ex.meta)]
        index.add_item(task_name, str(ex.id), parts)
    return len(examples)
