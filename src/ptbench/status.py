"""What state is each trial in? Derived from its files, so any shell can ask, at any time."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass

from ptbench.errors import UserError
from ptbench.runner.workspace import read_pid_file
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


def runner_alive(trial: TrialDir) -> bool:
    info = read_pid_file(trial.runner_pid)
    if info is None:
        return False
    pid, host = info
    if host != _HOST:
        return True  # another node's runner: trust its pid file (the scheduler's view refines this)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def trial_status(trial: TrialDir) -> TrialStatus:
    result = trial.read_result()
    if result is not None:
        pm = result.get("primary_metric") or {}
        metric = f"{pm['value']:.3f} (n={pm['n']})" if pm else ""
        failure = result.get("failure") or {}
        detail = f"{failure.get('stage')}: {failure.get('kind')}" if failure else ""
        return TrialStatus(trial.id, result["status"], None, result["budget"]["solve_seconds_used"], metric, detail,
                           (result.get("provenance") or {}).get("job_id"))
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
        return TrialStatus(trial.id, "failed", f.get("stage"), state.solve_seconds_used,
                           detail=f"{f.get('kind')}: {f.get('message', '')}"[:80] + (" (retryable)" if f.get("retryable") else ""), job_id=job)
    if state.attempts:
        return TrialStatus(trial.id, "interrupted", stage, state.solve_seconds_used, job_id=job)
    return TrialStatus(trial.id, "pending", stage)


FINAL_STATES = {"completed", "timed_out", "agent_failed", "no_model", "eval_failed", "setup_failed", "cancelled"}
