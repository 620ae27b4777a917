"""The prepare stage's files: workspace, timer.sh, training data, the prompt."""

from __future__ import annotations

import json
import os
import shlex
import time
from pathlib import Path

import jinja2

import ptbench
from ptbench.fsutil import atomic_write_text
from ptbench.trial import TrialDir

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
exec @PYTHON@ -m ptbench eval @TASK@ --model "$model" --out "eval_runs/$(date +%s)" --task-options @OPTIONS@ --base-model @BASE@ --chat-template @CHAT@ --agent-view "$@"
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
        EVALUATE_SH.replace("@PYTHON@", shlex.quote(python)).replace("@TASK@", spec.task.name).replace("@OPTIONS@", options)
        .replace("@BASE@", shlex.quote(spec.base_model.id)).replace("@CHAT@", spec.evaluation.chat_template)
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
    atomic_write_text(trial.prompt_txt, render_prompt(trial, task_context=getattr(task, "agent_context", "")))


def render_prompt(trial: TrialDir, *, task_context: str = "") -> str:
    spec = trial.spec
    env = jinja2.Environment(loader=jinja2.PackageLoader("ptbench.agents", "templates"), undefined=jinja2.StrictUndefined)
    hours = spec.budget.hours
    hours_text = f"{hours:g} hours" if hours >= 1 else f"{hours * 60:g} minutes"
    gpus = spec.budget.gpus
    gpu_info = f"{gpus} x {spec.budget.gpu_type or 'GPU'}" if gpus else "CPU only (no GPU)"
    return env.get_template("prompt.md.j2").render(
        base_model_id=spec.base_model.id,
        base_model=spec.base_model.path or spec.base_model.id,
        task=spec.task.display,
        task_name=spec.task.name,
        task_context=task_context,
        workspace=str(trial.workspace),
        gpu_info=gpu_info,
        hours_text=hours_text,
    )


def job_identity() -> tuple[str, str | None]:
    """(scheduler, job id) of the job this runner runs in."""
    if os.environ.get("SLURM_JOB_ID"):
        array = os.environ.get("SLURM_ARRAY_JOB_ID")
        task = os.environ.get("SLURM_ARRAY_TASK_ID")
        return "slurm", f"{array}_{task}" if array and task else os.environ["SLURM_JOB_ID"]
    if os.environ.get("_CONDOR_JOB_AD") or os.environ.get("PTBENCH_BACKEND") == "htcondor":
        return "htcondor", os.environ.get("PTBENCH_JOB_ID")
    return os.environ.get("PTBENCH_BACKEND", "local"), os.environ.get("PTBENCH_JOB_ID")


TIME_LIMIT_ENV = "PTBENCH_TIME_LIMIT_AT"
LIMIT_SIGNAL_ENV = "PTBENCH_TIME_LIMIT_SIGNAL"


def scheduler_time_limit_reached(signame: str) -> bool:
    """Does this stop signal mean the job's hard wall-clock limit (not a preemption or requeue)?

    A backend's job wrapper says so through the environment: $PTBENCH_TIME_LIMIT_SIGNAL names the
    signal the scheduler sends only before the limit (Slurm `--signal`), and $PTBENCH_TIME_LIMIT_AT
    (epoch seconds) is the moment after which any stop signal means the limit.
    """
    if signame and signame == os.environ.get(LIMIT_SIGNAL_ENV):
        return True
    try:
        return time.time() >= float(os.environ[TIME_LIMIT_ENV])
    except (KeyError, ValueError):
        return False


def pid_file_text() -> str:
    import socket

    return f"{os.getpid()} {socket.gethostname()}\n"


def read_pid_file(path: Path) -> tuple[int, str] | None:
    try:
        pid, host = path.read_text().split()
        return int(pid), host
    except (FileNotFoundError, ValueError):
        return None
