"""What state is each trial in? Derived from its files, so any shell can ask, at any time."""

from __future__ import annotations

import os
import re
import socket
import stat
from dataclasses import dataclass
from pathlib import Path

import psutil

from ptbench.core.errors import UserError
from ptbench.trial import TrialDir, TrialState

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
    progress: str = ""  # a running trial's: the agent's own progress and the budget left (`activity`)


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


# The trainer's tqdm bar, as TRL/transformers print it: "\r 10%|█    | 300/3000 [00:30<04:30, 9.9it/s]".
# A bar with a description before its percentage ("Map: 100%|…", "Tokenizing train dataset: …") is a
# data-preparation bar, not training steps, and is skipped.
# Counts of at most 12 digits: the agent writes this log, and int() refuses a 5,000-digit one.
_TRAINER_BAR = re.compile(r"(?:^|[\r\n])[ \t]*\d{1,3}%\|[^|\r\n]*\|[ \t]*(\d{1,12})/(\d{1,12}) \[")
LOG_TAIL_BYTES = 16384  # how much of agent/native.log is read for the last step count
_call_counts: dict[Path, tuple[int, int, int]] = {}  # calls.jsonl -> (inode, bytes counted, lines)


def _open_regular(path: Path) -> int | None:
    """A read-only descriptor of `path` if it is a regular file. The agent can reach its own agent/ folder
    (sandbox: none): a FIFO or a link put there must neither block the reader nor lead it elsewhere."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def _tail(path: Path, size: int = LOG_TAIL_BYTES) -> str:
    fd = _open_regular(path)
    if fd is None:
        return ""
    with os.fdopen(fd, "rb") as fh:
        end = os.fstat(fd).st_size
        fh.seek(max(0, end - size))
        return fh.read(size).decode(errors="replace")


COUNT_STEP_BYTES = 8 << 20  # lines counted a call at most in this many bytes: a flood is caught up later


def _lines(path: Path) -> int:
    """Lines of an append-only file, counted incrementally across calls (a watcher asks every second)."""
    fd = _open_regular(path)
    if fd is None:
        return 0
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        seen_ino, offset, count = _call_counts.get(path, (st.st_ino, 0, 0))
        if seen_ino != st.st_ino or offset > st.st_size:  # replaced or truncated: count anew
            offset, count = 0, 0
        fh.seek(offset)
        chunk = fh.read(COUNT_STEP_BYTES)
        count += chunk.count(b"\n")
        offset += len(chunk)
    _call_counts[path] = (st.st_ino, offset, count)
    return count


def agent_progress(trial: TrialDir) -> str:
    """What the agent reports of its own progress while it solves: the trainer's step count from the
    last bar in agent/native.log (the reference recipe, any TRL/transformers run), else the model calls
    the trial's gateway recorded (agent/calls.jsonl, an LLM agent's turns). Display only: it comes from
    the agent's output, so it is parsed as numbers and never scores or decides anything."""
    bars = _TRAINER_BAR.findall(_tail(trial.agent_dir / "native.log"))
    if bars:
        done, total = bars[-1]
        return f"step {int(done)}/{int(total)}"
    calls = _lines(trial.agent_dir / "calls.jsonl")
    return f"{calls} model call{'s' if calls != 1 else ''}" if calls else ""


def activity(trial: TrialDir, state: TrialState) -> tuple[str | None, str]:
    """(stage now running, progress text) of a trial a runner holds, from the files it writes atomically
    (state.json: the stage markers and the solve time the watchdog persists every second)."""
    stage = state.next_stage()
    parts = []
    if stage == "solve":
        parts.append(agent_progress(trial))
    if stage in ("prepare", "solve"):
        left = max(0.0, trial.spec.budget.seconds - state.solve_seconds_used)
        parts.append(f"{hms(left)} left")
    return stage, ", ".join(p for p in parts if p)


def hms(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


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
        try:
            _, progress = activity(trial, state)
        except UserError:  # a trial.json gone bad: the state column says enough
            progress = ""
        return TrialStatus(trial.id, st, stage, state.solve_seconds_used, job_id=job, progress=progress)
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
