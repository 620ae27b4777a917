"""`ptbench eval`: generate with an engine, score with the task, write metrics and samples.

A multi-turn task (`multi_turn`: a bootcamp environment with an interaction) plays its examples
itself with the engine (`task.play`), each as an episode of the bootcamp rollout loop.

The runner's evaluate stage and agents in their workspace call the same function, so an agent's
own check and the final score cannot drift apart (the final one always runs the harness's copy).

Evaluation runs in token phases (tasks/protocol.py): each phase is a full retry of generation and
scoring with a lower max new tokens, entered when the previous phase failed for *any* reason; every
phase is recorded. A result is written only when a phase produced a finite score over at least one
example; otherwise `failure.json` and EvaluationFailed (exit code 3, the runner's `eval_failed`).
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ptbench.core.errors import EvaluationFailed, UserError
from ptbench.core.files import atomic_write_json, atomic_write_text
from ptbench.inference import Engine, get_engine
from ptbench.inference.chat_format import ChatFormat, choose_chat_format
from ptbench.tasks.base import Example, ScoredBatch, Task, get_task, mean_stderr
from ptbench.tasks.identity import scored_set_identity


def render_prompts(chat: ChatFormat, engine: Engine, examples: list[Example]) -> list[str]:
    """Completion prompts as they are; chat prompts (and BFCL's tools) through the chosen chat format."""
    return [
        ex.prompt
        if isinstance(ex.prompt, str)
        else chat.render(ex.prompt, ex.meta.get("tools"), engine.apply_chat_template)
        for ex in examples
    ]


def score_examples(task: Task, examples: list[Example], texts: list[str]) -> ScoredBatch:
    """Per-example `score`, or the task's own `score_batch` (judged and executed tasks)."""
    batch = getattr(task, "score_batch", None)
    if batch is not None:
        return batch(examples, texts)
    return ScoredBatch(scores=[task.score(ex, t) for ex, t in zip(examples, texts, strict=True)])


def primary_metric(task: Task, scored: ScoredBatch) -> dict[str, Any]:
    if scored.primary is not None:
        return asdict(scored.primary)
    valid = [s for s in scored.scores if s is not None]
    value, stderr = mean_stderr(valid)
    return {"name": task.primary_metric, "value": value, "stderr": stderr, "n": len(valid)}


def phase_tokens(task: Task) -> tuple[int, ...]:
    settings = task.generation()
    return (settings.max_new_tokens, *settings.retry_max_new_tokens)


def _chat_record(chat: ChatFormat, engine: Engine | None, examples: list[Example]) -> dict[str, Any]:
    if all(isinstance(ex.prompt, str) for ex in examples):
        return {"source": "unused (completion prompts)"}
    tokenizer = getattr(engine, "tokenizer", None)
    return chat.record(getattr(tokenizer, "chat_template", None) if chat.source == "model" else None)


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
    base_model: str | None = None,
    chat_template: str = "harness",
    agent_view: bool = False,
    installation: dict[str, Any] | None = None,
    caches: dict[str, str] | None = None,
    after: Callable[[Engine], None] | None = None,
) -> dict[str, Any]:
    """Evaluate `model_path` on a task; writes `metrics.json` and `samples.jsonl` into out_dir.

    `base_model` (the trial's base model id) picks the harness's chat template; `chat_template`
    "model" opts into the model's own. `agent_view` (the agent's evaluate.sh) leaves references and
    per-example grading details out of `samples.jsonl`. Raises EvaluationFailed (after writing
    `failure.json`) when no phase could score trustworthily. `after` is called with the engine once
    the metrics are written (the runner's evaluation scores the memorization check's items there)."""
    if engine_options is None and os.environ.get("PTBENCH_ENGINE_OPTIONS"):
        engine_options = json.loads(os.environ["PTBENCH_ENGINE_OPTIONS"])
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    task = get_task(task_name, **(task_options or {}))
    preflight = getattr(task, "preflight", None)
    if preflight is not None:
        preflight()
    examples = task.test_examples(limit)
    if not examples:
        raise UserError(f"task '{task_name}': no test examples to evaluate (check data_path and limit)")
    chat = choose_chat_format(base_model, chat_template)
    if chat.source == "harness" and chat.family is None and not all(isinstance(ex.prompt, str) for ex in examples):
        chat.render([], None, None)  # raises the one-line error now, before a model is loaded
    # An engine object may be passed in (tests and `ptbench baseline` reuse one loaded model).
    eng: Engine | None = None if isinstance(engine, str) else engine
    prompts: list[str] | None = None
    phases: list[dict[str, Any]] = []
    generation = task.generation()
    for number, max_tokens in enumerate(phase_tokens(task), 1):
        started = time.monotonic()
        try:
            if eng is None:
                assert isinstance(engine, str)  # no engine object was passed in
                eng = get_engine(engine, model_path, batch_size=batch_size, **(engine_options or {}))
            if prompts is None:
                prompts = render_prompts(chat, eng, examples)
            if getattr(task, "multi_turn", False):  # episodes of the rollout loop (tasks/bootcamp_task.py)
                completions, scored = task.play(eng, chat, examples, generation, max_tokens)  # type: ignore[attr-defined]
            else:
                completions = eng.generate(prompts, generation, max_new_tokens=max_tokens)
                scored = score_examples(task, examples, [c.text for c in completions])
            primary = primary_metric(task, scored)
            if not primary["n"] or not math.isfinite(primary["value"]):
                raise EvaluationFailed(
                    f"{task_name}: no example could be scored (n={primary['n']}, value={primary['value']})"
                )
        except Exception as exc:  # any failure is retried in the next phase, and recorded
            if isinstance(exc, UserError) and not isinstance(exc, EvaluationFailed):
                raise  # a setup mistake (no template for the family, a bad option): no phase can fix it
            phases.append(_failed_phase(number, max_tokens, started, exc))
            last = exc
            continue
        phases.append(
            {"phase": number, "max_new_tokens": max_tokens, "ok": True, "seconds": round(time.monotonic() - started, 3)}
        )
        break
    else:
        settings = _settings(task, eng, chat, examples, phases, limit)
        detail = getattr(last, "detail", {})
        atomic_write_json(
            out / "failure.json",
            {"task": task_name, "error": f"{type(last).__name__}: {last}", **detail, "settings": settings},
        )
        raise EvaluationFailed(
            f"{task_name}: every evaluation phase failed ({len(phases)} phases); last: {last}",
            {"phases": phases, **detail},
        )
    _write_samples(
        out,
        examples,
        prompts,
        completions,
        scored.scores,
        scored.details or [{}] * len(examples),
        agent_view=agent_view,
    )
    settings = _settings(task, eng, chat, examples, phases, limit)
    settings.update(scored.settings)
    if installation is not None:
        settings["installation"] = installation
    if caches is not None:
        settings["caches"] = caches
    metrics = {
        "task": {"name": task_name, "version": task.version, "options": task_options or {}},
        "primary": primary,
        "extra": {
            "truncated": sum(c.finish_reason == "length" for c in completions),
            "prompt_too_long": sum(c.finish_reason == "prompt_too_long" for c in completions),
            "unscored": sum(s is None for s in scored.scores),
            **scored.extra,
        },
        "settings": settings,
    }
    atomic_write_json(out / "metrics.json", metrics)
    if after is not None and eng is not None:
        after(eng)
    return metrics


def _failed_phase(number: int, max_tokens: int, started: float, exc: BaseException) -> dict[str, Any]:
    return {
        "phase": number,
        "max_new_tokens": max_tokens,
        "ok": False,
        "error": f"{type(exc).__name__}: {exc}"[:1000],
        "seconds": round(time.monotonic() - started, 3),
    }


def _settings(
    task: Task, eng: Engine | None, chat: ChatFormat, examples: list[Example], phases, limit
) -> dict[str, Any]:
    info = getattr(task, "settings_info", None)
    return {
        "engine": getattr(eng, "name", None),
        "engine_settings": getattr(eng, "settings", {}),
        "phases": phases,
        "generation": asdict(task.generation()),
        "limit": limit,
        "chat_template": _chat_record(chat, eng, examples),
        **(info() if info else {}),
        "test_set": scored_set_identity(examples, getattr(task, "dataset", {})),
    }


# What the agent's view of samples.jsonl keeps (an allow-list: references, rubric grades, judge
# verdicts and executed ground truths stay out, whatever fields a task adds later).
_AGENT_FIELDS = ("id", "completion", "finish_reason", "score")


def _write_samples(out: Path, examples, prompts, completions, scores, details, *, agent_view: bool = False) -> None:
    # `prompt` is the text the model saw (after the chat template), so the template applied can be checked.
    rows = [
        {
            "id": ex.id,
            "prompt": p,
            "reference": ex.reference,
            "completion": c.text,
            "finish_reason": c.finish_reason,
            "score": s,
            **d,
        }
        for ex, p, c, s, d in zip(examples, prompts, completions, scores, details, strict=True)
    ]
    if agent_view:
        rows = [{k: r[k] for k in _AGENT_FIELDS} for r in rows]
    atomic_write_text(out / "samples.jsonl", "".join(json.dumps(r, default=str) + "\n" for r in rows))
