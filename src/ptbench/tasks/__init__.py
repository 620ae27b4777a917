"""Benchmarks, one module each, registered by name."""

from ptbench.tasks.base import Example, GenerationSettings, MetricValue, Task, available_tasks, get_task, mean_stderr, register_task

__all__ = ["Example", "GenerationSettings", "MetricValue", "Task", "available_tasks", "get_task", "mean_stderr", "register_task"]
