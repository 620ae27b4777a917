"""`ptbench eval`: generate with an engine, score with the task, write metrics and samples.

The runner's evaluate stage and agents in their workspace call the same function, so an agent's
own check and the final score cannot drift apart (the final one always runs the harness's copy).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ptbench.core.files import atomic_write_json, atomic_write_text
from ptbench.inference import Engine, get_engine
from ptbench.core.errors import GenerationFailed
from ptbench.tasks.base import Example, ScoredBatch, Task, get_task, mean_stderr
from ptbench.core.errors import EvaluationFailed


def _prompts(task: Task, engine: Engine, examples: list[Example]) -> list[str]:
    # Chat prompts (lists of messages) go through the model's own chat template; tools (BFCL) too.
    return [ex.prompt if isinstance(ex.prompt, str) else
            (engine.apply_chat_template(ex.prompt, tools=ex.meta["tools"]) if ex.meta.get("tools") else engine.apply_chat_template(ex.prompt))
            for ex in examples]


def score_examples(task: Task, examples: list[Example], texts: list[str]) -> ScoredBatch:
    """Per-example `score`, or the task's own `score_batch` (judged and executed tasks)."""
    batch = getattr(task, "score_batch", None)
    if batch is not None:
        return batch(examples, texts)
    return ScoredBatch(scores=[task.score(ex, t) for ex, t in zip(examples, texts)])


def primary_metric(task: Task, scored: ScoredBatch) -> dict[str, Any]:
    if scored.primary is not None:
        return asdict(scored.primary)
    valid = [s for s in scored.scores if s is not None]
    value, stderr = mean_stderr(valid)
    return {"name": task.primary_metric, "value": value, "stderr": stderr, "n": len(valid)}


def generate_with_retries(task: Task, engine: Engine, prompts: list[str]) -> tuple[list[Any], list[dict[str, Any]]]:
    """Generate; on a length/memory failure retry with each lower max_new_tokens, recording every phase."""
    settings = task.generation()
    phases: list[dict[str, Any]] = []
    for max_tokens in (settings.max_new_tokens, *settings.retry_max_new_tokens):
        started = time.monotonic()
        try:
            completions = engine.generate(prompts, settings, max_new_tokens=max_tokens)
        except GenerationFailed as exc:
            phases.append({"max_new_tokens": max_tokens, "ok": False, "error": str(exc), "seconds": round(time.monotonic() - started, 3)})
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
    engine: str | Engine = "auto",
    limit: int | None = None,
    batch_size: int = 32,
    engine_options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Evaluate `model_path` on a task; writes `metrics.json` and `samples.jsonl` into out_dir.

    Raises EvaluationFailed (after writing `failure.json`) when the task cannot score trustworthily.
    `engine_options` (or the env PTBENCH_ENGINE_OPTIONS, a JSON object) go to the engine."""
    if engine_options is None and os.environ.get("PTBENCH_ENGINE_OPTIONS"):
        engine_options = json.loads(os.environ["PTBENCH_ENGINE_OPTIONS"])
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    task = get_task(task_name, **(task_options or {}))
    preflight = getattr(task, "preflight", None)
    if preflight is not None:
        preflight()
    examples = task.test_examples(limit)
    # An engine object may be passed in (tests and `ptbench baseline` reuse one loaded model).
    eng = get_engine(engine, model_path, batch_size=batch_size, **(engine_options or {})) if isinstance(engine, str) else engine
    completions, phases = generate_with_retries(task, eng, _prompts(task, eng, examples))
    texts = [c.text for c in completions]
    settings = {"engine": eng.name, "engine_settings": getattr(eng, "settings", {}), "phases": phases,
                "generation": asdict(task.generation()), "limit": limit}
    info = getattr(task, "settings_info", None)
    settings.update(info() if info else {})
    try:
        scored = score_examples(task, examples, texts)
    except EvaluationFailed as exc:
        _write_samples(out, examples, completions, [None] * len(examples), [{}] * len(examples))
        atomic_write_json(out / "failure.json", {"task": task_name, "error": str(exc), **exc.detail, "settings": settings})
        raise
    _write_samples(out, examples, completions, scored.scores, scored.details or [{}] * len(examples))
    settings.update(scored.settings)
    metrics = {
        "task": {"name": task_name, "version": task.version, "options": task_options or {}},
        "primary": primary_metric(task, scored),
        "extra": {"truncated": sum(c.finish_reason == "length" for c in completions),
                  "prompt_too_long": sum(c.finish_reason == "prompt_too_long" for c in completions),
                  "unscored": sum(s is None for s in scored.scores), **scored.extra},
        "settings": settings,
    }
    atomic_write_json(out / "metrics.json", metrics)
    return metrics


def _write_samples(out: Path, examples, completions, scores, details) -> None:
    rows = [{"id": ex.id, "reference": ex.reference, "completion": c.text, "finish_reason": c.finish_reason, "score": s, **d}
            for ex, c, s, d in zip(examples, completions, scores, details)]
    atomic_write_text(out / "samples.jsonl", "".join(json.dumps(r, default=str) + "\n" for r in rows))
