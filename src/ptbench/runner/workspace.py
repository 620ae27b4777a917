"""The prepare stage's files: workspace, timer.sh, training data, the prompt."""

from __future__ import annotations

import json
import shlex
import time
from pathlib import Path

import jinja2

import ptbench
from ptbench.core.files import atomic_write_text
from ptbench.tasks.base import Task
from ptbench.trial import TrialDir, TrialSpec

TIMER_SH = """#!/usr/bin/env bash
# Prints the time left in this trial's budget. The harness rewrites .deadline on every (re)start
# of the agent from the time it has persisted, so a resumed run shows what is really left.
deadline=$(cat "$(dirname "$0")/.deadline" 2>/dev/null) || { echo "deadline unknown"; exit 1; }
left=$(( ${deadline%.*} - $(date +%s) ))
(( left < 0 )) && left=0
printf 'Remaining time (hours:minutes:seconds): %d:%02d:%02d\\n' $((left / 3600)) $(((left % 3600) / 60)) $((left % 60))
"""

EVALUATE_SH = """#!/usr/bin/env bash
# A copy of the benchmark's evaluation for your own checks: bash evaluate.sh MODEL_DIR [--limit N].
# It shows scores (metrics.json; samples.jsonl without the test references). The final score is
# computed by the harness's own copy, with the harness's chat template, whatever happens to this file.
set -euo pipefail
model=${1:-final_model}; shift || true
export PYTHONPATH=@PTBENCH_ROOT@${PYTHONPATH:+:$PYTHONPATH}  # the ptbench the harness runs, not another one on the path
exec @PYTHON@ -m ptbench eval @TASK@ --model "$model" --out "eval_runs/$(date +%s)" \\
  --task-options @OPTIONS@ --base-model @BASE@ --chat-template @CHAT@ --agent-view "$@"
"""


def write_deadline(trial: TrialDir, seconds_left: float) -> None:
    atomic_write_text(trial.workspace / ".deadline", f"{int(time.time() + seconds_left)}\n")


def prepare_workspace(trial: TrialDir, *, python: str) -> None:
    spec = trial.spec
    for d in (trial.workspace, trial.agent_dir, trial.home / "tmp", trial.checks_dir, trial.eval_dir):
        d.mkdir(parents=True, exist_ok=True)
    atomic_write_text(trial.workspace / "timer.sh", TIMER_SH, mode=0o755)
    options = shlex.quote(json.dumps(spec.task.options))
    atomic_write_text(
        trial.workspace / "evaluate.sh",
        EVALUATE_SH.replace("@PYTHON@", shlex.quote(python))
        .replace("@TASK@", spec.task.name)
        .replace("@OPTIONS@", options)
        .replace("@BASE@", shlex.quote(spec.base_model.id))
        .replace("@CHAT@", spec.evaluation.chat_template)
        .replace("@PTBENCH_ROOT@", shlex.quote(str(Path(ptbench.__file__).resolve().parent.parent))),
        mode=0o755,
    )
    write_deadline(trial, spec.budget.seconds)
    from ptbench.tasks import get_task

    task = get_task(spec.task.name, **spec.task.options)
    train = task.train_examples(spec.seed)
    if train:
        (trial.workspace / "data").mkdir(exist_ok=True)
        atomic_write_text(trial.workspace / "data" / "train.jsonl", "".join(json.dumps(r) + "\n" for r in train))
    atomic_write_text(trial.prompt_txt, render_prompt(trial.spec, trial.workspace, task))


def render_prompt(spec: TrialSpec, workspace: Path, task: Task) -> str:
    """What the agent is told: its base model, task (the benchmark's own brief, and what this instance
    adds: a bootcamp's `agent_context`), budget and workspace (trials and Harbor tasks alike)."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ptbench.agents", "templates"), undefined=jinja2.StrictUndefined
    )
    hours = spec.budget.hours
    hours_text = f"{hours:g} hours" if hours >= 1 else f"{hours * 60:g} minutes"
    gpus = spec.budget.gpus
    gpu_info = f"{gpus} x {spec.budget.gpu_type or 'GPU'}" if gpus else "CPU only (no GPU)"
    return env.get_template("prompt.md.j2").render(
        base_model_id=spec.base_model.id,
        base_model=spec.base_model.path or spec.base_model.id,
        task=spec.task.display,
        task_name=spec.task.name,
        task_brief=task.agent_brief,
        task_context=getattr(task, "agent_context", ""),
        workspace=str(workspace),
        gpu_info=gpu_info,
        hours_text=hours_text,
    )
