"""`ptbench eval`: generate with an engine, score with the task, write metrics and samples.

The runner's evaluate stage and agents in their workspace call the same function, so an agent's
own check and the final score cannot drift apart (the final one always runs the harness's copy).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ptbench.fsutil import atomic_write_json, atomic_write_text
from ptbench.inference.base import Engine, GenerationFailed, get_engine
from ptbench.tasks.base import Example, Task, get_task, mean_stderr


def _prompts(task: Task, engine: Engine, examples: list[Example]) -> list[str]:
    return [ex.prompt if isinstance(ex.prompt, str) else engine.apply_chat_template(ex.prompt) for ex in examples]


def generate_with_retries(task: Task, engine: Engine, prompts: list[str]) -> tuple[list[Any], list[dict[str, Any]]]:
    """Generate; on a length/memory failure retry with each lower max_new_tokens, recording every phase."""
    settings = task.generation()
    phases: list[dict[str, Any]] = []
    for max_tokens in (settings.max_new_tokens, *settings.retry_max_new_tokens):
        started = time.monotonic()
        try:
            completions = engine.generate(prompts, settings, max_new_tokens=max_tokens)
        except GenerationFailed as exc:
            phases.append({"max_new_tokens": max_tokens, "ok": False, "error": str(exc), "seconds": time.monotonic() - started})
            continue
        phases.append({"max_new_tokens": max_tokens, "ok": True, "seconds": round(time.monotonic() - started, 3)})
        return completions, phases
    raise GenerationFailed(f"every generation phase failed: {phases}")


def evaluate(
    task_name: str,
    model_path: str,
    out_dir: str | Path,
    *,
    task_options: dict[str, Any] | None = None,
    engine: str = "auto",
    limit: int | None = None,
    batch_size: int = 32,
) -> dict[str, Any]:
    """Evaluate `model_path` on a task; writes `metrics.json` and `samples.jsonl` into out_dir."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    task = get_task(task_name, **(task_options or {}))
    examples = task.test_examples(limit)
    eng = get_engine(engine, model_path, batch_size=batch_size)
    completions, phases = generate_with_retries(task, eng, _prompts(task, eng, examples))
    scores = [task.score(ex, c.text) for ex, c in zip(examples, completions)]
    value, stderr = mean_stderr(scores)
    samples = [
        {"id": ex.id, "reference": ex.reference, "completion": c.text, "finish_reason": c.finish_reason, "score": s}
        for ex, c, s in zip(examples, completions, scores)
    ]
    atomic_write_text(out / "samples.jsonl", "".join(json.dumps(s) + "\n" for s in samples))
    metrics = {
        "task": {"name": task_name, "version": task.version, "options": task_options or {}},
        "primary": {"name": task.primary_metric, "value": value, "stderr": stderr, "n": len(scores)},
        "extra": {"truncated": sum(c.finish_reason == "length" for c in completions)},
        "settings": {"engine": eng.name, "phases": phases, "generation": asdict(task.generation()), "limit": limit},
    }
    atomic_write_json(out / "metrics.json", metrics)
    return metrics
