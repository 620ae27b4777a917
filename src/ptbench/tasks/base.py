"""The task interface: load data, build prompts, generate settings, score; and the task's facts.

A task is registered by name where it is defined (`@register_task`). The runner, `ptbench eval`
and the reference agent only talk to this interface. Everything ptbench knows about one benchmark
(its held-out data, token phases, few-shot bound, the agent's brief, its memorization sibling source,
its contamination extras) is an attribute of its class (`TaskFacts`), read by every consumer through
the registry: no table elsewhere is keyed by a task's name (tests/test_plugin_names.py), so a
benchmark is one module, in ptbench or in a site's plugin package (docs/guides/add-a-benchmark.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from ptbench.caches.resources import EvalList, Resource, eval_resources
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


class TaskFacts:
    """A benchmark's facts, with the default each takes when its class does not state it (a class
    registered without subclassing this gets the defaults filled in by `register_task`)."""

    token_phases: ClassVar[tuple[int, ...]] = (3000, 2000)
    """max new tokens of each evaluation phase, tried in turn (a phase is a full retry of generation
    and scoring after any failure; tasks/protocol.py); task options can override them."""
    max_fewshot: ClassVar[int] = 0
    """worked examples the task ships for base-model few-shot prompts (`ptbench baseline` skips a
    larger shot count; 0: zero-shot only)."""
    default_baseline: ClassVar[bool] = False
    """whether `ptbench baseline` evaluates it when no --tasks are given."""
    agent_brief: ClassVar[str] = ""
    """what the agent is told about the benchmark, under "The task" of its prompt."""
    eval_resources: ClassVar[tuple[Resource, ...]] = ()
    """Hub data only the evaluation may hold (its test set, judge references): the evaluation cache's
    list is generated from these (`evaluation_list`), and `ptbench cache verify` proves the agent
    cache has none of it. Empty for generated data or data from a URL."""
    sibling_source: ClassVar[str | None] = None
    """the memorization check's sibling builder, "module:function" (task, seed, rng) -> SiblingSets,
    imported in the check's process only (tasks may not import integrity: the layers)."""
    no_sibling_reason: ClassVar[str | None] = None
    """where there is no sibling source: exactly why (the check is then `not_applicable`)."""

    @classmethod
    def configured_test_size(cls, options: dict[str, Any]) -> int | None:
        """The test split's size as the campaign's options fix it, where they do (a generated task);
        None where only loading tells. `validate` reads it to say a check lacks power up front."""
        return None

    def contamination_answers(self) -> list[str] | None:
        """Reference texts, one per test example in order, that the Examples do not carry (GSM8K keeps
        only the final number; its worked solutions are test data too), for the contamination index."""
        return None


_FACTS = [k for k in vars(TaskFacts) if not k.startswith("_")]


@runtime_checkable
class Task(Protocol):
    name: ClassVar[str]
    version: ClassVar[str]
    primary_metric: ClassVar[str]
    token_phases: ClassVar[tuple[int, ...]]
    max_fewshot: ClassVar[int]
    default_baseline: ClassVar[bool]
    agent_brief: ClassVar[str]
    eval_resources: ClassVar[tuple[Resource, ...]]
    sibling_source: ClassVar[str | None]
    no_sibling_reason: ClassVar[str | None]

    @classmethod
    def configured_test_size(cls, options: dict[str, Any]) -> int | None: ...

    def contamination_answers(self) -> list[str] | None: ...

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
    for fact in _FACTS:  # a class written against the bare protocol takes the defaults
        if not hasattr(cls, fact):
            setattr(cls, fact, vars(TaskFacts)[fact])


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


def default_baseline_tasks() -> list[str]:
    """The tasks `ptbench baseline` evaluates when none are named."""
    return [n for n in available_tasks() if task_class(n).default_baseline]


def evaluation_list(path: str | Path | None = None) -> EvalList:
    """The evaluation cache's list: a given file's, else every registered task's held-out data (its
    `eval_resources`) and ptbench's list of instruct models (caches/data/eval_resources.json), so a
    benchmark's test set is kept out of the agent cache by the benchmark being registered."""
    listed = eval_resources(path)
    if path is not None:
        return listed
    held_out: list[Resource] = []
    for name in available_tasks():
        held_out += [r for r in task_class(name).eval_resources if r not in held_out]
    return EvalList([*held_out, *listed.resources])


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
