"""Benchmarks, one module each, registered by name."""

from ptbench.tasks.base import (
    Example,
    MetricValue,
    ScoredBatch,
    Task,
    available_tasks,
    get_task,
    mean_stderr,
    register_task,
)

__all__ = [
    "Example",
    "ScoredBatch",
    "MetricValue",
    "Task",
    "available_tasks",
    "get_task",
    "mean_stderr",
    "register_task",
]
