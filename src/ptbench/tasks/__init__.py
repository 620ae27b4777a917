"""Benchmarks, one module each, registered by name."""

from ptbench.tasks.base import (
    EvaluationFailed,
    Example,
    GenerationSettings,
    MetricValue,
    ScoredBatch,
    Task,
    available_tasks,
    get_task,
    mean_stderr,
    register_task,
)

__all__ = ["EvaluationFailed", "Example", "ScoredBatch", "GenerationSettings", "MetricValue", "Task", "available_tasks", "get_task", "mean_stderr", "register_task"]
