"""What state is each trial in? Derived from its files, so any shell can ask, at any time."""

from __future__ import annotations

import socket
from dataclasses import dataclass

import psutil

from ptbench.core.errors import UserError
from ptbench.trial import TrialDir

_HOST = socket.gethostname()


@dataclass
class TrialStatus:
    trial_id: str
    state: str  # pending | queued | running | interrupted | failed | <result status>
    stage: str | None = None
    seconds_used: float = 0.0
    metric: str = ""
    detail: str = ""
    job_id: str | None = None
    log: str | None = None


def local_runner_pid(trial: TrialDir) -> int | None:
    """The pid of the live runner of this trial on this host, checked by its command line
    (a stale pid file whose number was reused by another process does not count)."""
    info = trial.read_runner_pid()
    if info is None or info[1] != _HOST:
        return None
    try:
        cmdline = psutil.Process(info[0]).cmdline()
    except psutil.Error:
        return None
    # `trial run DIR` may have been given a relative DIR: match the trial's folder name
    return info[0] if any(arg.rstrip("/").endswith(trial.id) for arg in cmdline) else None


def runner_alive(trial: TrialDir) -> bool:
    info = trial.read_runner_pid()
    if info is None:
        return False
    if info[1] != _HOST:
        return True  # another node's runner: trust its pid file (the scheduler's view refines this)
    return local_runner_pid(trial) is not None


def integrity_flags(verdicts: dict[str, str]) -> str:
    """'integrity: contamination flagged, judge unchecked' ('' when every check is clean or has no
    method for the task: `not_applicable` neither clears nor faults a trial)."""
    bad = [f"{name} {v}" for name, v in sorted(verdicts.items()) if v not in ("clean", "not_applicable")]
    return f"integrity: {', '.join(bad)}" if bad else ("" if verdicts else "integrity: unchecked")


def trial_status(trial: TrialDir) -> TrialStatus:
    result = trial.read_result()
    if result is not None:
        pm = result.get("primary_metric") or {}
        metric = f"{pm['value']:.3f} (n={pm['n']})" if pm else ""
        failure = result.get("failure") or {}
        detail = f"{failure.get('stage')}: {failure.get('kind')}" if failure else ""
        flags = integrity_flags(result.get("integrity") or {})
        detail = "; ".join(x for x in (detail, flags) if x)
        return TrialStatus(
            trial.id,
            result["status"],
            None,
            result["budget"]["solve_seconds_used"],
            metric,
            detail,
            (result.get("provenance") or {}).get("job_id"),
        )
    try:
        state = trial.load_state()
    except UserError:
        return TrialStatus(trial.id, "corrupt", detail="state.json is corrupt")
    stage = state.next_stage()
    job = state.attempts[-1].job_id if state.attempts else None
    if runner_alive(trial):
        st = "cancelling" if trial.cancel_marker.exists() else "running"
        return TrialStatus(trial.id, st, stage, state.solve_seconds_used, job_id=job)
    if state.failure:
        f = state.failure
        return TrialStatus(
            trial.id,
            "failed",
            f.get("stage"),
            state.solve_seconds_used,
            detail=f"{f.get('kind')}: {f.get('message', '')}"[:80] + (" (retryable)" if f.get("retryable") else ""),
            job_id=job,
        )
    if state.attempts:
        return TrialStatus(trial.id, "interrupted", stage, state.solve_seconds_used, job_id=job)
    return TrialStatus(trial.id, "pending", stage)


FINAL_STATES = {"completed", "timed_out", "agent_failed", "no_model", "eval_failed", "setup_failed", "cancelled"}
