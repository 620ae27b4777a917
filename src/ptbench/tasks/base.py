"""The task interface: load data, build prompts, generate settings, score.

A task is registered by name where it is defined (`@register_task`). The runner, `ptbench eval`
and the reference agent only talk to this interface.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

from ptbench.core.errors import UserError
from ptbench.core.generation import GenerationSettings
from ptbench.core.registry import Registry


@dataclass(frozen=True)
class Example:
    """One test item: `id` is stable across runs; `reference` is what the scorer compares against."""

    id: str
    prompt: Any  # str for completion-style prompts, list of chat messages otherwise
    reference: Any
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class MetricValue:
    name: str
    value: float
    stderr: float | None
    n: int


@dataclass
class ScoredBatch:
    """What a task's optional `score_batch(examples, completions)` returns (judged and executed
    tasks score all examples at once). A score of None means "could not be scored" (e.g. the judge
    failed for it): such examples are left out of the mean and counted in `extra`."""

    scores: list[float | None]
    details: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    primary: MetricValue | None = None  # where the stderr is not the plain standard error of the mean


@runtime_checkable
class Task(Protocol):
    name: ClassVar[str]
    version: ClassVar[str]
    primary_metric: ClassVar[str]

    def train_examples(self, seed: int) -> list[dict[str, str]] | None:
        """Training split as prompt/completion pairs, or None where the benchmark has none."""

    def test_examples(self, limit: int | None = None) -> list[Example]: ...

    def generation(self) -> GenerationSettings: ...

    def score(self, example: Example, completion: str) -> float: ...


def _load_builtin_tasks() -> None:
    import importlib
    import pkgutil

    import ptbench.tasks as pkg

    for mod in pkgutil.iter_modules(pkg.__path__):
        if not mod.name.startswith("_") and mod.name not in {"base", "evaluate", "options"}:
            importlib.import_module(f"ptbench.tasks.{mod.name}")


def _name_task(name: str, cls: type[Task]) -> None:
    cls.name = name


TASKS: Registry[type[Task]] = Registry("task", load=_load_builtin_tasks, on_register=_name_task)


def register_task(name: str) -> Callable[[Any], Any]:
    """Class decorator: make a task constructible by name (`get_task(name, **options)`)."""
    return TASKS.register(name)


def available_tasks() -> list[str]:
    return TASKS.names()


def task_class(name: str) -> type[Task]:
    return TASKS.get(name)


def get_task(name: str, **options: Any) -> Task:
    cls = task_class(name)
    try:
        return cls(**options)
    except TypeError as exc:
        raise UserError(f"task '{name}': bad options {options}: {exc}") from None


def uses_chat_prompts(task: Task) -> bool:
    """Whether `task` asks with chat messages (rendered with a chat template) rather than completion
    text: its `prompt_format` option where it has one, else its class's `chat_prompts` (default no)."""
    fmt = getattr(task, "prompt_format", None)
    return fmt == "chat" if fmt is not None else bool(getattr(task, "chat_prompts", False))


def mean_stderr(values: list[float]) -> tuple[float, float | None]:
    """Mean and standard error of the mean (None with fewer than two values)."""
    n = len(values)
    if n == 0:
        return float("nan"), None
    mean = sum(values) / n
    if n < 2:
        return mean, None
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, math.sqrt(var / n)
