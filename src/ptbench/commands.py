"""What the CLI commands do, kept apart from argument parsing so tests can call them directly."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console, Group, RenderableType
from rich.table import Table as RichTable
from rich.text import Text

from ptbench.core.errors import UserError
from ptbench.core.yamlio import LocatedYaml
from ptbench.plan import RETRY_STATUSES as RETRY_STATUSES  # re-exported: `run --retry-*` and ptbench.api
from ptbench.plan import Plan, load_plan, plan_campaign
from ptbench.plan import retry_finished as retry_finished
from ptbench.results.collate import rehearsal_hint
from ptbench.results.collate import resolve_campaign_dir as resolve_campaign_dir  # re-exported: the CLI uses them here
from ptbench.results.collate import write_tables as write_tables
from ptbench.runner import record
from ptbench.spec import Campaign
from ptbench.status import FINAL_STATES, TrialStatus, hms, trial_status
from ptbench.trial import TrialDir
from ptbench.validate import validate_campaign

console = Console()
err_console = Console(stderr=True)


# A campaign file, or a campaign parsed with its source (a one-line `run`'s flags; `ptbench.api`).
CampaignSource = str | Path | tuple[Campaign, LocatedYaml]


def source_of(campaign: CampaignSource) -> str:
    """What campaign.json records as the campaign's source: the file, or the flags' description."""
    return str(campaign[1].path) if isinstance(campaign, tuple) else str(Path(campaign).resolve())


def plan(campaign_file: CampaignSource, *, replace: bool = False, validated: Campaign | None = None) -> Plan:
    campaign = validated or validate_campaign(campaign_file, agents_can_start=False)[0]
    return plan_campaign(campaign, replace=replace, source=source_of(campaign_file))


def plan_checked(
    campaign_file: CampaignSource,
    *,
    replace: bool = False,
    rehearse: bool = False,
    submit_to: str | None = None,
    submitting: bool = False,
) -> Plan:
    """Plan after checking that every agent can start (keys, logins, CLIs) and, when `submitting` (to
    `submit_to`, else the campaign's backend), that the scheduler's client is installed (nothing is
    planned otherwise); a rehearsal plans <name>-rehearsal. What `run`, `submit` and `ptbench.api.run` call."""
    from ptbench.agents.rehearsal import rehearsal_campaign
    from ptbench.backends import get_backend

    c, _ = validate_campaign(campaign_file, rehearse=rehearse)
    if submitting:
        name = submit_to or c.backend.name
        chosen = get_backend(name, c.backend.options if name == c.backend.name else {})
        getattr(chosen, "check_client", lambda: None)()
    if not rehearse:
        return plan(campaign_file, replace=replace, validated=c)
    return plan_campaign(rehearsal_campaign(c), replace=replace, source=source_of(campaign_file))


ONE_LINE_FLAGS = {"agents": "--agent", "model": "--model", "task": "--task", "hours": "--hours"}


def one_line_campaign(campaign_file: str | None, flags: dict) -> tuple[Campaign, LocatedYaml] | None:
    """The campaign a one-line `ptbench run --agent A --model M --task T --hours H` describes, or None
    when a campaign file is given (and no one-line flag: a file and the flags together are refused)."""
    from ptbench.spec.flags import campaign_from_flags

    given = [k for k, v in flags.items() if v not in (None, [], ())]
    if campaign_file is not None:
        if given:
            names = ", ".join(ONE_LINE_FLAGS.get(k, "--" + k.rstrip("s").replace("_", "-")) for k in given)
            raise UserError(
                f"ptbench run {campaign_file}: the one-line flags ({names}) describe a campaign without a file; "
                "give the campaign file or the flags, not both (put those settings in the file)"
            )
        return None
    missing = [flag for key, flag in ONE_LINE_FLAGS.items() if flags.get(key) in (None, [])]
    if missing:
        raise UserError(
            f"ptbench run: name a campaign file, or give {', '.join(missing)} for a one-line run "
            "(e.g. ptbench run --agent reference --model ./tiny-llama --task arithmetic --hours 0.1)"
        )
    return campaign_from_flags(**{k: v for k, v in flags.items() if v not in (None, [])})


# States whose row shows where the job's log is (the scheduler's or the local runner's).
_SHOW_LOG = {"failed", "interrupted", "setup_failed", "agent_failed", "eval_failed", "corrupt"}


def status_rows(campaign_dir: Path, scheduler_states: dict[str, str] | None = None, backend=None) -> list[TrialStatus]:
    """Every trial's state from its files, refined by the scheduler's view of its job; failed ones
    get their log path when the backend can tell (`backend.log_path(campaign_dir, trial)`)."""
    trials = load_plan(campaign_dir)
    if not trials:
        hint = rehearsal_hint(campaign_dir, "status")
        raise UserError(f"{campaign_dir}: no planned trials here (plan or run the campaign first){hint}")
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
    console.print(status_table(campaign_dir, rows), soft_wrap=True)  # soft: log paths under the table stay whole


# Columns in the order they are given up when the terminal is too narrow (the least useful first);
# trial and state always stay. Every cell but `detail` stays on one line; `detail` wraps at words.
_DROP_ORDER = ("job", "time used", "stage", "progress", "metric")
_MIN_DETAIL = 24  # narrower than this, the detail column is not worth its wrapped lines


def status_table(campaign_dir: Path, rows: list[TrialStatus], width: int | None = None) -> RenderableType:
    """The status table, fitted to `width` (default: the terminal's) without breaking a cell mid-word:
    empty columns are hidden; too wide, the parts every trial id shares move to the title, then the
    least useful columns go (job, time used, stage, progress, metric) and long words end in an ellipsis; log
    paths are listed under the table, whole, where the detail column cannot hold them."""
    width = width or console.width
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.state] = counts.get(r.state, 0) + 1
    title = f"{campaign_dir.name}: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    style = {"completed": "green", "running": "cyan", "timed_out": "yellow", "cancelled": "dim"}
    ids = [r.trial_id for r in rows]
    columns = {
        "trial": ids,
        "state": [r.state for r in rows],
        "stage": [r.stage or "" for r in rows],
        "time used": [_hms(r.seconds_used) for r in rows],
        "progress": [r.progress for r in rows],
        "metric": [r.metric for r in rows],
        "job": [r.job_id or "" for r in rows],
        "detail": [r.detail for r in rows],
    }
    shown = [c for c, vals in columns.items() if c in ("trial", "state") or any(vals)]  # hide empty columns

    def natural(cols: list[str], with_logs: bool) -> int:
        widths = [max(len(c), *(len(v) for v in columns[c])) for c in cols]
        if with_logs and "detail" in cols and any(r.log for r in rows):
            widths[cols.index("detail")] += max(len(f"; log: {r.log}") for r in rows if r.log)
        return sum(widths) + 3 * len(cols) + 1  # rich's borders and padding

    logs_inline = natural(shown, True) <= width
    if not logs_inline:
        short, common = _short_ids(ids)
        if natural(shown, False) > width and common:
            columns["trial"] = short
            title += f" ({', '.join(common)})"
        for c in _DROP_ORDER:
            fits = natural(shown, False) <= width or (
                "detail" in shown and natural([x for x in shown if x != "detail"], False) + _MIN_DETAIL + 3 <= width
            )
            if fits or c not in shown:
                continue
            shown.remove(c)
    if logs_inline:
        columns["detail"] = ["; ".join(x for x in (r.detail, f"log: {r.log}" if r.log else "") if x) for r in rows]
        shown = [c for c, vals in columns.items() if c in ("trial", "state") or c in shown or any(vals)]
    table = RichTable(title=title)
    for c in shown:
        if c == "detail":
            table.add_column(c, overflow="ellipsis", min_width=min(_MIN_DETAIL, width // 3), ratio=1)
        else:
            table.add_column(c, no_wrap=True, overflow="ellipsis")
    for i, r in enumerate(rows):
        s = style.get(r.state, "red" if r.state in FINAL_STATES or r.state in ("failed", "corrupt") else "")
        cells = [columns[c][i] for c in shown]
        cells[1] = f"[{s}]{r.state}[/]" if s else r.state
        table.add_row(*cells)
    logs = [f"log of {columns['trial'][i]}: {r.log}" for i, r in enumerate(rows) if r.log and not logs_inline]
    # a path is not wrapped by rich (a newline inside it would break a copy and paste): the terminal wraps it
    return Group(table, *(Text(line, no_wrap=True, overflow="ignore") for line in logs)) if logs else table


def _short_ids(ids: list[str]) -> tuple[list[str], list[str]]:
    """Trial ids without the parts (agent, base model, task, seed: `plan.trial_id`) that all of them
    share, and those shared parts; unchanged when every part differs somewhere."""
    parts = [i.split("__") for i in ids]
    if not parts or len({len(p) for p in parts}) != 1:
        return ids, []
    same = [k for k in range(len(parts[0])) if len({p[k] for p in parts}) == 1]
    if not same or len(same) == len(parts[0]):
        return ids, []
    keep = [k for k in range(len(parts[0])) if k not in same]
    return ["__".join(p[k] for k in keep) for p in parts], [parts[0][k] for k in same]


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
