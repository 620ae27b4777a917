"""What the CLI commands do, kept apart from argument parsing so tests can call them directly."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table as RichTable

from ptbench.core.errors import UserError
from ptbench.plan import Plan, load_plan, plan_campaign
from ptbench.results.collate import resolve_campaign_dir as resolve_campaign_dir  # re-exported: the CLI uses them here
from ptbench.results.collate import write_tables as write_tables
from ptbench.runner import record
from ptbench.spec import Campaign
from ptbench.status import FINAL_STATES, TrialStatus, hms, trial_status
from ptbench.trial import TrialDir
from ptbench.validate import validate_campaign

console = Console()
err_console = Console(stderr=True)


def plan(campaign_file: str, *, replace: bool = False, validated: Campaign | None = None) -> Plan:
    campaign = validated or validate_campaign(campaign_file, agents_can_start=False)[0]
    return plan_campaign(campaign, replace=replace, source=str(Path(campaign_file).resolve()))


# States whose row shows where the job's log is (the scheduler's or the local runner's).
_SHOW_LOG = {"failed", "interrupted", "setup_failed", "agent_failed", "eval_failed", "corrupt"}


def status_rows(campaign_dir: Path, scheduler_states: dict[str, str] | None = None, backend=None) -> list[TrialStatus]:
    """Every trial's state from its files, refined by the scheduler's view of its job; failed ones
    get their log path when the backend can tell (`backend.log_path(campaign_dir, trial)`)."""
    trials = load_plan(campaign_dir)
    if not trials:
        raise UserError(f"{campaign_dir}: no planned trials here (plan or run the campaign first)")
    rows = []
    log_path = getattr(backend, "log_path", None)
    for t in trials:
        st = trial_status(t)
        sched = (scheduler_states or {}).get(t.id)
        if sched == "ended" and st.state in ("running", "cancelling"):
            st.state = (
                "interrupted"  # its job is gone: the runner died without cleaning up (kill -9, OOM, node failure)
            )
        elif sched and sched != "ended" and st.state in ("pending", "interrupted", "failed"):
            st.state = sched
        if log_path is not None and st.state in _SHOW_LOG:
            path = log_path(campaign_dir, t)
            st.log = str(path) if path and _has_text(path) else None  # never point at a missing or empty log
        rows.append(st)
    return rows


def _has_text(path: Path) -> bool:
    try:
        return Path(path).stat().st_size > 0
    except OSError:
        return False


def print_status(campaign_dir: Path, rows: list[TrialStatus]) -> None:
    console.print(status_table(campaign_dir, rows))


def status_table(campaign_dir: Path, rows: list[TrialStatus]) -> RichTable:
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.state] = counts.get(r.state, 0) + 1
    table = RichTable(title=f"{campaign_dir.name}: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    style = {"completed": "green", "running": "cyan", "timed_out": "yellow", "cancelled": "dim"}
    columns = {
        "trial": [r.trial_id for r in rows],
        "state": [r.state for r in rows],
        "stage": [r.stage or "" for r in rows],
        "time used": [_hms(r.seconds_used) for r in rows],
        "progress": [r.progress for r in rows],
        "metric": [r.metric for r in rows],
        "job": [r.job_id or "" for r in rows],
        "detail": ["; ".join(x for x in (r.detail, f"log: {r.log}" if r.log else "") if x) for r in rows],
    }
    shown = [c for c, vals in columns.items() if c in ("trial", "state") or any(vals)]  # hide empty columns
    for c in shown:
        table.add_column(c, no_wrap=c in ("trial", "state", "metric"), overflow="fold")
    for i, r in enumerate(rows):
        s = style.get(r.state, "red" if r.state in FINAL_STATES or r.state in ("failed", "corrupt") else "")
        cells = [columns[c][i] for c in shown]
        cells[1] = f"[{s}]{r.state}[/]" if s else r.state
        table.add_row(*cells)
    return table


def _hms(seconds: float) -> str:
    return hms(seconds) if int(seconds) else ""


def select_trials(campaign_dir: Path, trial_ids: list[str] | None) -> list[TrialDir]:
    trials = load_plan(campaign_dir)
    if not trial_ids:
        return trials
    by_id = {t.id: t for t in trials}
    missing = [t for t in trial_ids if t not in by_id]
    if missing:
        raise UserError(f"{campaign_dir}: no trial '{missing[0]}' (see `ptbench status {campaign_dir}`)")
    return [by_id[t] for t in trial_ids]


def record_cancelled_if_idle(trial: TrialDir) -> bool:
    """Write a `cancelled` result for a trial no runner is working on; False if a runner holds it."""
    if trial.result_json.exists():
        return True
    with trial.try_lock() as held:
        if not held:
            return False
        if not trial.result_json.exists():
            state = trial.load_state()
            trial.event("cancelled", by="ptbench cancel")
            record.finish(trial, state, record.cancelled(trial, state), by="ptbench cancel")
        return True


LIVE_JOB_STATES = ("queued", "running", "suspended", "requeued")


def job_is_live(state: str | None) -> bool:
    """A scheduler state in which the trial's job may still run (a held HTCondor job can be released)."""
    return state in LIVE_JOB_STATES or (state or "").startswith("held")


def submittable(
    plan: Plan, *, retry_failed: bool = False, scheduler_states: dict[str, str] | None = None
) -> list[TrialDir]:
    """Unfinished trials that are not already queued or running (by their files, or by the
    scheduler's `scheduler_states`); failed ones only when asked, and only retryable failures."""
    live = scheduler_states or {}
    out = []
    for t in plan.unfinished:
        if job_is_live(live.get(t.id)):
            continue
        st = trial_status(t)
        if st.state in ("running", "cancelling") and live.get(t.id) == "ended":
            st.state = "interrupted"  # stale pid file of a runner whose job is gone
        if st.state in ("running", "cancelling", "corrupt"):
            continue
        if st.state == "failed" and not (retry_failed and (t.load_state().failure or {}).get("retryable")):
            continue
        if t.cancel_marker.exists():
            continue
        out.append(t)
    return out
