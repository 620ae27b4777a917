"""The evaluate stage's command: what the runner runs to score `final_model/`.

Everything that decides the score comes from the harness, not from the agent's workspace: the
trial's base model id (which picks the harness's chat template), the harness-only evaluation cache
(PTBENCH_EVAL_CACHE, default `<campaign>/.harness/eval-cache`, never bound into an agent's
sandbox: judge verdicts, reference answers, and the Hugging Face hub/datasets caches the test sets
are loaded through, so a test set the agent rewrote in the shared HF cache is never read), and a
check of the ptbench installation against its distribution RECORD (its hash cache kept there too,
and only where the campaign's sandbox keeps the agent out of it).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ptbench.sandbox.request import reach_note
from ptbench.trial import TrialDir

INSTALL_HASHES = "install-hashes.json"  # --verify-install's hash cache (runner/installation.py)


def evaluation_argv(trial: TrialDir, python: str, *, memorization_context: dict | None = None) -> list[str]:
    """`memorization_context` (the trial's check context): evaluation also scores the memorization
    check's items with its engine (integrity/memorization/final_scores.py)."""
    spec = trial.spec
    ev = spec.evaluation
    argv = [
        python,
        "-P",  # the working folder is not put on the import path (it could hold a planted `ptbench/`)
        "-m",
        "ptbench",
        "eval",
        spec.task.name,
        "--model",
        str(trial.final_model),
        "--out",
        str(trial.eval_dir),
        "--engine",
        ev.engine,
        "--batch-size",
        str(ev.batch_size),
        "--task-options",
        json.dumps(spec.task.options),
        "--base-model",
        spec.base_model.id,
        "--chat-template",
        ev.chat_template,
        "--eval-cache",
        str(trial.eval_cache),
        "--verify-install",
    ]
    hashes = trial.eval_cache / INSTALL_HASHES
    if not reach_note(spec.sandbox, spec.sandbox_options, hashes):  # where the agent could write it: none
        argv += ["--install-cache", str(hashes)]
    if ev.limit:
        argv += ["--limit", str(ev.limit)]
    if memorization_context is not None:
        argv += ["--memorization-context", json.dumps(memorization_context)]
    return argv


def use_harness_caches(root: str | Path) -> dict[str, str]:
    """Point this process's evaluation at the harness-only cache: judge verdicts and the Hugging
    Face hub and datasets caches (test sets are downloaded there, not read from the agent-writable
    shared cache; an offline node uses data_path / PTBENCH_DATA_DIR or a cache seeded beforehand).
    Must run before `huggingface_hub` is imported: it reads these variables once."""
    root = Path(root).resolve()
    env = {
        "PTBENCH_EVAL_CACHE": str(root),
        "HF_HUB_CACHE": str(root / "hf-hub"),
        "HF_DATASETS_CACHE": str(root / "hf-datasets"),
    }
    os.environ.update(env)
    return env
