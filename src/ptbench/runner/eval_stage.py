"""The evaluate stage's command: what the runner runs to score `final_model/`.

Everything that decides the score comes from the harness, not from the agent's workspace: the
trial's base model id (which picks the harness's chat template), the harness-only evaluation cache
(judge verdicts; PTBENCH_EVAL_CACHE, default `<campaign>/.harness/eval-cache`, never bound into an
agent's sandbox), and a check of the ptbench installation against its distribution RECORD.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ptbench.trial import TrialDir


def eval_cache_dir(trial: TrialDir) -> Path:
    """The harness-only evaluation cache of a trial's campaign (or $PTBENCH_EVAL_CACHE)."""
    return Path(os.environ.get("PTBENCH_EVAL_CACHE") or trial.path.parent / ".harness" / "eval-cache")


def evaluation_argv(trial: TrialDir, python: str) -> list[str]:
    spec = trial.spec
    ev = spec.evaluation
    argv = [python, "-m", "ptbench", "eval", spec.task.name, "--model", str(trial.final_model),
            "--out", str(trial.eval_dir), "--engine", ev.engine, "--batch-size", str(ev.batch_size),
            "--task-options", json.dumps(spec.task.options), "--base-model", spec.base_model.id,
            "--chat-template", ev.chat_template, "--eval-cache", str(eval_cache_dir(trial)), "--verify-install"]
    if ev.limit:
        argv += ["--limit", str(ev.limit)]
    return argv
