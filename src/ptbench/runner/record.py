"""A trial's `result.json`: built from its state, eval metrics and provenance, and written by
`finish`, the one writer every terminal status goes through (the runner's record stage, a cancel
of an idle trial, a scheduler's time limit seen in its job log)."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

from ptbench.agents.session import load_session
from ptbench.core.provenance import provenance
from ptbench.integrity import read_judge_agreement, read_verdicts
from ptbench.node.monitor import summarize as monitor_summary
from ptbench.results.schema import (
    AgentInfo,
    BaseModelInfo,
    BudgetUsed,
    Failure,
    Metric,
    MonitorSummary,
    Provenance,
    ResultRecord,
    TaskInfo,
)
from ptbench.results.store import write_record
from ptbench.runner.agent_solve import launch_fact, sandbox_used
from ptbench.sandbox.request import sandbox_facts
from ptbench.trial import StageMark, TrialDir, TrialState


def _mode(layer: object) -> str | None:
    return str(layer.get("mode")) if isinstance(layer, dict) and layer.get("mode") else None


def _isolated(sandbox: str) -> bool | None:
    """Whether the sandbox the agent ran in isolated it, from the sandbox's registered facts (None:
    the agent never ran)."""
    return None if sandbox == "unknown" else sandbox_facts(sandbox).isolates


def _base(trial: TrialDir, state: TrialState, status: str, failure: Failure | None) -> ResultRecord:
    spec = trial.spec
    b = spec.budget
    return ResultRecord(
        campaign=spec.campaign,
        trial_id=spec.trial_id,
        agent=AgentInfo(name=spec.agent.name, model=spec.agent.model, label=spec.agent.display),
        base_model=BaseModelInfo(
            id=spec.base_model.id, revision=spec.base_model.revision, label=spec.base_model.display
        ),
        task=TaskInfo(name=spec.task.name, label=spec.task.display),
        seed=spec.seed,
        status=status,
        failure=failure,
        sandbox=sandbox_used(trial),
        sandbox_isolated=_isolated(sandbox_used(trial)),
        deadline_kill=launch_fact(trial, "containment"),
        agent_credentials=launch_fact(trial, "credentials"),
        network=launch_fact(trial, "network"),
        hf_cache=_mode(launch_fact(trial, "hf_cache")),
        budget=BudgetUsed(
            hours=b.hours,
            gpus=b.gpus,
            gpu_type=b.gpu_type,
            solve_seconds_used=round(state.solve_seconds_used, 2),
            solve_runs=state.solve_runs,
        ),
        provenance=Provenance(**provenance(), bootcamp=_bootcamp_provenance(trial)),
        finished_at=time.time(),
    )


def build(trial: TrialDir, state: TrialState) -> ResultRecord:
    """The final record after the evaluate stage."""
    solve = state.stages["solve"]
    collect = state.stages["collect"]
    evaluate = state.stages["evaluate"]
    failure = None
    metrics_file = trial.eval_dir / "metrics.json"
    if evaluate.outcome == "failed" or (evaluate.outcome == "ok" and not _finite_score(metrics_file)):
        status = "eval_failed"
        # Retryable: a judge outage or a node's memory trouble passes; the score is never guessed.
        failure = Failure(
            stage="evaluate",
            kind="eval_error",
            retryable=True,
            message=evaluate.detail.get("log_tail", "")[-500:] or f"{metrics_file}: missing or without a finite score",
        )
    elif not collect.detail.get("found"):
        status = "no_model" if solve.outcome in ("ok", "timed_out") else "agent_failed"
        kind = {"ok": "no_final_model", "timed_out": "timeout"}.get(solve.outcome, "agent_exit")
        # The agent's failure as classified from its output (rate limit, auth, quota, ...), when known.
        kind = solve.detail.get("failure_kind", kind)
        why = solve.detail.get("failure_message")
        failure = Failure(
            stage="solve",
            kind=kind,
            retryable=bool(solve.detail.get("retryable", False)),
            message=f"agent exit code {solve.detail.get('exit_code')}; no final_model/" + (f"; {why}" if why else ""),
        )
    elif solve.outcome == "timed_out":
        status = "timed_out"
        failure = Failure(
            stage="solve",
            kind="timeout",
            message="budget used up; final_model/ saved before the deadline was evaluated",
        )
    else:
        status = "completed"
    record = _base(trial, state, status, failure)
    if status != "eval_failed" and evaluate.outcome == "ok":
        metrics = json.loads(metrics_file.read_text())
        record.primary_metric = Metric(**metrics["primary"])
        record.extra_metrics = metrics.get("extra", {})
        record.evaluation = metrics.get("settings", {})
        record.task.version = metrics.get("task", {}).get("version")
    elif (trial.eval_dir / "failure.json").is_file():  # the phases tried and the judge counts, for the record
        failed = json.loads((trial.eval_dir / "failure.json").read_text())
        record.evaluation = failed.get("settings", {})
        record.extra_metrics = {k: v for k, v in failed.items() if k.startswith("judge_")}
    record.integrity, record.integrity_detail = read_verdicts(trial.checks_dir, list(trial.spec.integrity.checks))
    record.integrity_judge_agreement = read_judge_agreement(trial.checks_dir)
    usage = trial.agent_dir / "usage.json"
    if usage.exists():
        record.usage = json.loads(usage.read_text())
    record.agent.cli_version = load_session(trial.agent_dir).cli_version
    return record


def _finite_score(metrics_file: Path) -> bool:
    try:
        value = json.loads(metrics_file.read_text())["primary"]["value"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return isinstance(value, (int, float)) and math.isfinite(value)


def cancelled(trial: TrialDir, state: TrialState) -> ResultRecord:
    stage = state.next_stage() or "record"
    return _base(trial, state, "cancelled", Failure(stage=stage, kind="cancelled", message="cancelled by the user"))


def exhausted(trial: TrialDir, state: TrialState) -> ResultRecord:
    """A trial requeued more often than allowed: record where it got to, and why."""
    last = state.failure or {}
    stage = last.get("stage") or state.next_stage() or "record"  # where it failed (a node check: prepare)
    kind = last.get("kind", "requeue_limit")
    status = {"prepare": "setup_failed", "evaluate": "eval_failed", "integrity": "eval_failed"}.get(
        stage, "agent_failed"
    )
    last_message = last.get("message", "")
    msg = f"gave up after {len(state.attempts) - 1} attempts; last stage reached: {stage}; {last_message}".strip("; ")
    return _base(
        trial, state, status, Failure(stage=stage, kind=kind, message=msg, retryable=bool(last.get("retryable")))
    )


def scheduler_time_limit(trial: TrialDir, state: TrialState, reason: str = "") -> ResultRecord:
    """The scheduler's own wall-clock limit ended the job before the pipeline finished.

    Always `timed_out`; the failure's stage says how far the trial got."""
    stage = state.next_stage() or "record"
    msg = (
        f"{reason + '; ' if reason else ''}the scheduler's time limit ended the job in the {stage} stage "
        f"(after {state.solve_seconds_used:.0f} s of solving); raise budget.margin_minutes or budget.eval_minutes"
    )
    return _base(trial, state, "timed_out", Failure(stage=stage, kind="scheduler_time_limit", message=msg))


def finish(
    trial: TrialDir,
    state: TrialState,
    result: ResultRecord,
    *,
    by: str | None = None,
    ended_at: float | None = None,
    attempt_outcome: str | None = None,
    secrets: dict[str, str] | None = None,
    **event: object,
) -> bool:
    """Record `result` as the trial's outcome. The caller holds the trial's lock (`TrialDir.try_lock`).

    The file is written by `write_record` (atomic, redacted, never overwritten: False when a result
    already existed); the record stage is marked, the open attempt closed (at `ended_at`, default
    now, as `attempt_outcome`) and `recorded` logged, so state.json and events.jsonl agree with
    result.json whoever wrote it."""
    if result.monitor is None and (summary := monitor_summary(trial.path)):
        result.monitor = MonitorSummary(**summary)
    written = write_record(trial.result_json, result, secrets=secrets)
    now = time.time()
    state.stages["record"] = StageMark(done_at=now, outcome=result.status, detail={"by": by} if by else {})
    if state.attempts and state.attempts[-1].ended_at is None:
        state.attempts[-1].ended_at = ended_at or now
        state.attempts[-1].outcome = attempt_outcome or result.status
    trial.save_state(state)
    trial.event("stage_done", stage="record", outcome=result.status)
    trial.event("recorded", status=result.status, **({"by": by} if by else {}), **event)
    return written


def _bootcamp_provenance(trial: TrialDir) -> dict[str, Any] | None:
    """What a bootcamp-trained model's recipe says trained it (`ptbench.bootcamp.export.grpo` writes it
    beside the weights). Reported by the agent, so recorded as such, never trusted as a verdict."""
    path = trial.path / "final_model" / "ptbench_bootcamp.json"
    try:
        data = json.loads(path.read_text()) if path.is_file() and not path.is_symlink() else None
    except (OSError, ValueError):
        return {"unreadable": True}
    if not isinstance(data, dict):
        return None
    keep = ("config", "data_hash", "manifest_sha256", "split", "cases_used", "recipe", "sft_warm_start_steps")
    return {k: data[k] for k in keep if isinstance(data.get(k), str | int)} | {"reported_by": "agent"}
