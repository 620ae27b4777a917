"""`ptbench eval-references`: reference answers made by ptbench itself, with the same engine.

Arena-Hard writing compares a model's answers with the official instruct model's (default
Qwen3-1.7B). Those answers are generated here, once, with the evaluation engine and the task's
token phases, and kept in the harness-only evaluation cache
($PTBENCH_EVAL_CACHE/references/<task>/<model>.jsonl) where every later evaluation finds them.
A meta file beside them records how they were made; an existing file is never overwritten
unless asked.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from ptbench.core.errors import UserError
from ptbench.core.files import atomic_write_json, atomic_write_text
from ptbench.inference import get_engine
from ptbench.inference.chat_format import choose_chat_format
from ptbench.tasks.arena_hard_writing import ArenaHardWriting, reference_file
from ptbench.tasks.base import get_task
from ptbench.tasks.evaluate import phase_tokens, render_prompts
from ptbench.tasks.identity import examples_sha256


def default_reference_root() -> Path:
    root = os.environ.get("PTBENCH_EVAL_CACHE")
    if not root:
        raise UserError("eval-references: pass --out DIR or set PTBENCH_EVAL_CACHE (the harness-only evaluation cache)")
    return Path(root) / "references"


def generate_references(
    task_name: str,
    model_path: str,
    out_root: str | Path | None = None,
    *,
    name: str | None = None,
    engine: str = "auto",
    batch_size: int = 32,
    limit: int | None = None,
    task_options: dict[str, Any] | None = None,
    chat_template: str = "model",
    base_model: str | None = None,
    replace: bool = False,
) -> Path:
    """Answer the task's questions with `model_path`; returns the references file."""
    task = get_task(task_name, **(task_options or {}))
    if not isinstance(task, ArenaHardWriting):
        raise UserError(f"task '{task_name}' is not scored against reference answers (only arena_hard_writing is)")
    name = name or task.reference_model
    path = reference_file(Path(out_root) if out_root else default_reference_root(), name)
    if path.exists() and not replace:
        raise UserError(f"{path} exists: the references of {name} are already made (pass --replace to make them again)")
    examples = task.question_examples(limit)
    chat = choose_chat_format(base_model, chat_template)
    eng = get_engine(engine, model_path, batch_size=batch_size)
    prompts = render_prompts(chat, eng, examples)
    phases: list[dict[str, Any]] = []
    for number, max_tokens in enumerate(phase_tokens(task), 1):
        started = time.monotonic()
        try:
            completions = eng.generate(prompts, task.generation(), max_new_tokens=max_tokens)
        except Exception as exc:  # the next phase retries with fewer tokens, as evaluation does
            phases.append(
                {
                    "phase": number,
                    "max_new_tokens": max_tokens,
                    "ok": False,
                    "error": f"{type(exc).__name__}: {exc}"[:1000],
                }
            )
            continue
        phases.append(
            {"phase": number, "max_new_tokens": max_tokens, "ok": True, "seconds": round(time.monotonic() - started, 3)}
        )
        break
    else:
        raise UserError(f"eval-references: every generation phase failed: {phases[-1]['error']}")
    rows = [
        {"uid": ex.id, "answer": c.text, "model": name, "finish_reason": c.finish_reason, "n_tokens": c.n_tokens}
        for ex, c in zip(examples, completions, strict=True)
    ]
    tokenizer = getattr(eng, "tokenizer", None)
    meta = {
        "task": task_name,
        "model": name,
        "model_path": str(model_path),
        "engine": eng.name,
        "engine_settings": getattr(eng, "settings", {}),
        "phases": phases,
        "limit": limit,
        "chat_template": chat.record(getattr(tokenizer, "chat_template", None) if chat.source == "model" else None),
        "questions_sha256": examples_sha256(examples),
        "questions": getattr(task, "dataset", {}),
        "made_at": time.time(),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    atomic_write_json(path.with_suffix(".meta.json"), meta)
    close = getattr(eng, "close", None)
    if close:
        close()
    return path
