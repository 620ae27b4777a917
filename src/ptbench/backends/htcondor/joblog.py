"""Read a campaign's HTCondor user log (`<campaign>/condor/jobs.log`) with `htcondor2.JobEventLog`.

The log is the schedd's own account of every job — submitted, executing, evicted, held (with the
reason and code), released, terminated (with the return value), aborted — and it needs no schedd to
read. Each job's submit event carries `ptbench trial <id>` (the description's submit_event_notes),
so the log alone maps jobs to trials, even for clusters someone submitted with condor_submit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ptbench.backends.htcondor import schedd as htcondor_schedd

DURATION_HOLD_CODES = {46: "allowed_job_duration", 47: "allowed_execute_duration"}
_NOTES = re.compile(r"^ptbench trial (\S+)\s*$")


@dataclass
class JobView:
    """What the log says about one job (cluster.proc), event by event."""

    job_id: str
    trial_id: str | None = None
    state: str = "queued"  # queued | running | held | exited | removed
    executions: int = 0
    evictions: int = 0
    completions: int = 0
    return_value: int | None = None
    signal: int | None = None
    hold_code: int | None = None
    hold_reason: str = ""
    held_at: float | None = None
    duration_hold: tuple[int, str, float] | None = None  # (code, reason, time) of a hold for a time limit
    host: str | None = None
    events: list[dict] = field(default_factory=list)  # forwarded into the trial's events.jsonl

    @property
    def sort_key(self) -> tuple[int, int]:
        c, p = self.job_id.split(".")
        return int(c), int(p)


def _note(view: JobView, kind: str, when: float, **fields) -> None:
    view.events.append({"time": when, "event": f"condor_{kind}", "job_id": view.job_id, **fields})


def read_job_log(path: Path) -> dict[str, JobView]:
    """Every job in the log by 'cluster.proc'. Raises ImportError without the bindings, OSError if unreadable."""
    htcondor2 = htcondor_schedd.bindings()
    ET = htcondor2.JobEventType
    jobs: dict[str, JobView] = {}
    for ev in htcondor2.JobEventLog(str(path)).events(stop_after=0):
        job_id = f"{ev.cluster}.{ev.proc}"
        view = jobs.setdefault(job_id, JobView(job_id))
        when = float(ev.timestamp)
        t = ev.type
        if t == ET.SUBMIT:
            m = _NOTES.match(str(ev.get("LogNotes", "") or ""))
            view.trial_id = m.group(1) if m else view.trial_id
            _note(view, "submitted", when)
        elif t == ET.EXECUTE:
            view.state, view.executions = "running", view.executions + 1
            view.host = str(ev.get("SlotName") or ev.get("ExecuteHost") or "") or None
            _note(view, "executing", when, host=view.host)
        elif t == ET.JOB_EVICTED:
            view.evictions += 1
            if view.state == "running":  # an eviction logged after a hold must not unhold the job
                view.state = "queued"
            _note(view, "evicted", when)
        elif t == ET.JOB_HELD:
            view.state, view.held_at = "held", when
            view.hold_code = _int(ev.get("HoldReasonCode"))
            view.hold_reason = str(ev.get("HoldReason", "") or "")
            if view.hold_code in DURATION_HOLD_CODES:
                view.duration_hold = (view.hold_code, view.hold_reason, when)
            _note(view, "held", when, code=view.hold_code, reason=view.hold_reason)
        elif t == ET.JOB_RELEASED:
            view.state, view.hold_code, view.hold_reason = "queued", None, ""
            view.duration_hold = None
            _note(view, "released", when)
        elif t == ET.JOB_TERMINATED:
            view.completions += 1
            view.state = "exited"
            if ev.get("TerminatedNormally", True):
                view.return_value, view.signal = _int(ev.get("ReturnValue")), None
            else:
                view.return_value, view.signal = None, _int(ev.get("TerminatedBySignal"))
            _note(view, "terminated", when, return_value=view.return_value, signal=view.signal)
        elif t == ET.JOB_ABORTED:
            view.state = "removed"
            _note(view, "removed", when, reason=str(ev.get("Reason", "") or ""))
    return jobs


def _int(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def scheduler_state(view: JobView, max_retries: int | None) -> str:
    """One short state for the status table."""
    if view.state == "running":
        return "running"
    if view.state == "held":
        return f"held: {view.hold_reason or 'code ' + str(view.hold_code)}"[:100]
    if view.state == "removed":
        return "removed"
    if view.state == "exited":
        if view.return_value == 75 and (max_retries is None or view.completions <= max_retries):
            return "requeued"  # retry_until lets exit 75 run again
        if view.signal is not None:
            return f"killed by signal {view.signal}"
        return f"exited {view.return_value}"
    return "requeued" if view.executions else "queued"
