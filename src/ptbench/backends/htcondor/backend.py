"""The `htcondor` backend: one cluster per submission, one job per trial, tracked from the user log.

- `render` writes `<campaign>/submit/htcondor.sub` (htcondor/templates/htcondor_trials.sub.j2) without submitting.
- `submit` writes `<campaign>/condor/submit-<time>.sub`, submits it (htcondor2 Schedd, else
  condor_submit) and records cluster and trial -> proc in `<campaign>/jobs.json`.
- `scheduler_states` reads `<campaign>/condor/jobs.log` (condor_q/condor_history only when the log
  cannot be read), forwards the job's events into each trial's events.jsonl, and records a
  `timed_out` result for a job held at its duration limit before the runner could record one.
- `cancel` marks the trials and removes their jobs (Schedd.act, else condor_rm); each runner stops
  on kill_sig and records `cancelled`.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from ptbench.backends.htcondor import schedd as htcondor_schedd
from ptbench.backends.htcondor.joblog import DURATION_HOLD_CODES, JobView, read_job_log, scheduler_state
from ptbench.backends.htcondor.options import HTCondorOptions, parse_options
from ptbench.backends.htcondor.render import Rendered, render_trials
from ptbench.core.errors import UserError
from ptbench.core.files import append_jsonl, atomic_write_json, atomic_write_text
from ptbench.core.locks import file_lock
from ptbench.plan import Plan
from ptbench.runner import record
from ptbench.spec import Campaign
from ptbench.trial import TrialDir, TrialSpec


class CondorSubmission(BaseModel):
    cluster: int
    submitted_at: float
    via: str
    description: str
    max_retries: int
    procs: dict[str, int] = Field(description="trial id -> proc id in this cluster")


class CondorJobs(BaseModel):
    """`<campaign>/jobs.json` for the htcondor backend."""

    backend: Literal["htcondor"] = "htcondor"
    log: str
    submissions: list[CondorSubmission] = Field(default_factory=list)
    trials: dict[str, str] = Field(default_factory=dict, description="trial id -> its latest job, 'cluster.proc'")


def condor_dir(campaign_dir: Path) -> Path:
    return Path(campaign_dir) / "condor"


def job_log(campaign_dir: Path) -> Path:
    return condor_dir(campaign_dir) / "jobs.log"


def load_jobs(campaign_dir: Path) -> CondorJobs | None:
    path = Path(campaign_dir) / "jobs.json"
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except json.JSONDecodeError as exc:
        raise UserError(
            f"{path}: not valid JSON ({exc}); move it aside (job states will come from the job log)"
        ) from None
    if data.get("backend") != "htcondor":
        return None
    try:
        return CondorJobs.model_validate(data)
    except ValidationError as exc:
        raise UserError(f"{path}: not an htcondor job table ({exc.errors()[0]['msg']}); move it aside") from None


def unfinished_specs(campaign, specs) -> tuple[list, int]:
    """Specs whose trial has no result yet (what `submit` would send), and how many were left out."""
    todo = [s for s in specs if not (campaign.campaign_dir / s.trial_id / "result.json").exists()]
    return todo, len(specs) - len(todo)


class HTCondorBackend:
    name = "htcondor"

    def __init__(self, **options) -> None:
        self.opts: HTCondorOptions = parse_options(options)
        self._cache: tuple[tuple, dict[str, JobView]] | None = None

    # ---- render / submit -------------------------------------------------------------------
    def render(self, campaign: Campaign, specs: list[TrialSpec], out: str | None) -> str:
        todo, skipped = unfinished_specs(campaign, specs)
        rendered = render_trials(campaign, todo, self.opts, skipped=skipped)
        path = Path(out) if out else campaign.campaign_dir / "submit" / "htcondor.sub"
        path.parent.mkdir(parents=True, exist_ok=True)
        if campaign.campaign_dir.is_dir():
            condor_dir(campaign.campaign_dir).mkdir(exist_ok=True)  # condor_submit needs the log's folder
        atomic_write_text(path, rendered.text)
        return str(path)

    def submit(self, plan: Plan, trials: list[TrialDir]) -> dict[str, str]:
        """Submit the trials that have no live job; returns trial id -> 'cluster.proc'."""
        cdir = plan.campaign_dir
        latest = self._latest_views(cdir, trials)
        live = {tid for tid, v in latest.items() if v.state in ("queued", "running", "held")}
        todo = [t for t in trials if t.id not in live]
        if live:
            print(
                f"{cdir.name}: {len(live)} trial(s) already have a job in HTCondor; not submitting them again",
                file=sys.stderr,
            )
        if not todo:
            return {}
        rendered = render_trials(plan.campaign, [t.spec for t in todo], self.opts)
        cdir_condor = condor_dir(cdir)
        cdir_condor.mkdir(parents=True, exist_ok=True)
        desc = cdir_condor / f"submit-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.sub"
        atomic_write_text(desc, rendered.text)
        cluster, via = htcondor_schedd.submit(desc, rendered.rows, self.opts.submit_with)
        procs = {tid: i for i, tid in enumerate(rendered.trial_ids)}
        self._record_submission(
            cdir,
            CondorSubmission(
                cluster=cluster,
                submitted_at=time.time(),
                via=via,
                description=str(desc),
                max_retries=self.opts.max_retries
                if self.opts.max_retries is not None
                else plan.campaign.max_requeues + 1,
                procs=procs,
            ),
        )
        for t in todo:
            t.event("submitted", scheduler="htcondor", job_id=f"{cluster}.{procs[t.id]}", via=via)
        print(
            f"{cdir.name}: submitted {len(todo)} trial(s) as HTCondor cluster {cluster} (via {via}); log {job_log(cdir)}"
        )
        return {tid: f"{cluster}.{p}" for tid, p in procs.items()}

    def _record_submission(self, cdir: Path, sub: CondorSubmission) -> None:
        with file_lock(cdir / ".jobs.json.lock"):
            jobs_file = cdir / "jobs.json"
            jobs = load_jobs(cdir)
            if jobs is None:
                if jobs_file.exists():  # another backend's table: keep it beside ours
                    jobs_file.rename(cdir / f"jobs.{json.loads(jobs_file.read_text()).get('backend', 'other')}.json")
                jobs = CondorJobs(log=str(job_log(cdir)))
            jobs.submissions.append(sub)
            jobs.trials.update({tid: f"{sub.cluster}.{p}" for tid, p in sub.procs.items()})
            atomic_write_json(jobs_file, jobs)

    # ---- tracking ----------------------------------------------------------------------------
    def _views(self, cdir: Path) -> dict[str, JobView]:
        """Every job of the campaign, from the user log; from condor_q/condor_history if it cannot be read.
        Cached while the log and jobs.json are unchanged (`status` asks once per trial for log paths)."""
        key = tuple(_stamp(p) for p in (job_log(cdir), Path(cdir) / "jobs.json")) + (str(cdir),)
        if self._cache is not None and self._cache[0] == key and key[0] is not None:
            return self._cache[1]
        views = self._read_views(cdir)
        self._cache = (key, views)
        return views

    def _read_views(self, cdir: Path) -> dict[str, JobView]:
        jobs = load_jobs(cdir)
        log = Path(jobs.log) if jobs else job_log(cdir)
        try:
            views = read_job_log(log) if log.exists() else None
        except (ImportError, OSError):
            views = None
        if views is not None:
            by_job = {job: tid for tid, job in (jobs.trials.items() if jobs else ())}
            for v in views.values():
                v.trial_id = v.trial_id or by_job.get(v.job_id)
            return views
        if jobs is None:
            return {}
        return _views_from_queue(jobs)

    def _latest_views(self, cdir: Path, trials: list[TrialDir]) -> dict[str, JobView]:
        wanted = {t.id for t in trials}
        latest: dict[str, JobView] = {}
        for v in self._views(cdir).values():
            if v.trial_id in wanted and (v.trial_id not in latest or v.sort_key > latest[v.trial_id].sort_key):
                latest[v.trial_id] = v
        return latest

    def scheduler_states(self, campaign_dir: Path, trials: list[TrialDir], *, strict: bool = False) -> dict[str, str]:
        """From the job event log (always readable locally), so `strict` changes nothing here."""
        cdir = Path(campaign_dir)
        views = self._views(cdir)
        by_id = {t.id: t for t in trials}
        latest: dict[str, JobView] = {}
        for v in views.values():
            if v.trial_id in by_id and (v.trial_id not in latest or v.sort_key > latest[v.trial_id].sort_key):
                latest[v.trial_id] = v
        self._forward_events(cdir, by_id, views)
        jobs = load_jobs(cdir)
        retries = {
            f"{s.cluster}.{p}": s.max_retries for s in (jobs.submissions if jobs else ()) for p in s.procs.values()
        }
        states = {}
        for tid, v in latest.items():
            if v.duration_hold and not by_id[tid].result_json.exists():
                record_time_limit(by_id[tid], v)
            states[tid] = scheduler_state(v, retries.get(v.job_id))
        return states

    def _forward_events(self, cdir: Path, by_id: dict[str, TrialDir], views: dict[str, JobView]) -> None:
        """Append job events not yet seen to each trial's events.jsonl (a cursor per job)."""
        if not views or not condor_dir(cdir).is_dir():
            return
        cursor_file = condor_dir(cdir) / "tracked.json"
        with file_lock(condor_dir(cdir) / ".tracked.lock"):
            try:
                cursor = json.loads(cursor_file.read_text())
            except (FileNotFoundError, json.JSONDecodeError):
                cursor = {}
            changed = False
            for v in views.values():
                trial = by_id.get(v.trial_id or "")
                seen = cursor.get(v.job_id, 0)
                if trial is None or seen >= len(v.events):
                    continue
                for ev in v.events[seen:]:
                    append_jsonl(trial.events_jsonl, {**ev, "source": "htcondor job log"})
                cursor[v.job_id] = len(v.events)
                changed = True
            if changed:
                atomic_write_json(cursor_file, cursor)

    # ---- cancel / logs -----------------------------------------------------------------------
    def cancel(self, campaign_dir: Path, trials: list[TrialDir]) -> list[str]:
        """Mark the trials cancelled and remove their live jobs; returns the job ids removed."""
        for t in trials:
            t.cancel_marker.touch()
        latest = self._latest_views(Path(campaign_dir), trials)
        job_ids = sorted(
            (v.job_id for v in latest.values() if v.state in ("queued", "running", "held")),
            key=lambda j: tuple(map(int, j.split("."))),
        )
        warning = htcondor_schedd.remove(job_ids)
        if warning:
            print(f"warning: {warning}", file=sys.stderr)
        return job_ids

    def log_path(self, campaign_dir: Path, trial: TrialDir) -> Path | None:
        v = self._latest_views(Path(campaign_dir), [trial]).get(trial.id)
        if v is None:
            return None
        cluster, proc = v.job_id.split(".")
        return condor_dir(campaign_dir) / f"{trial.id}.{cluster}.{proc}.out"


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def _views_from_queue(jobs: CondorJobs) -> dict[str, JobView]:
    clusters = sorted({s.cluster for s in jobs.submissions})
    entries = htcondor_schedd.query(clusters)
    by_job = {job: tid for tid, job in jobs.trials.items()}
    views = {}
    for job_id, e in entries.items():
        v = JobView(job_id, trial_id=by_job.get(job_id))
        v.state = {"completed": "exited", "suspended": "running"}.get(e.status, e.status)
        v.return_value = e.exit_code
        if e.status == "held":
            v.hold_code, v.hold_reason = e.hold_code, e.hold_reason
            if e.hold_code in DURATION_HOLD_CODES:
                v.duration_hold = (e.hold_code, e.hold_reason, time.time())
        views[job_id] = v
    return views


def record_time_limit(trial: TrialDir, job: JobView) -> bool:
    """Record `timed_out` for a trial whose job HTCondor held at its time limit before the runner
    recorded a result. False when a runner on this host still holds the trial (try again later)."""
    assert job.duration_hold is not None
    code, reason, when = job.duration_hold
    with trial.try_lock() as held:
        if not held:
            return False
        if trial.result_json.exists():
            return True
        state = trial.load_state()
        message = f"HTCondor held job {job.job_id}: {reason or 'time limit'} (HoldReasonCode {code}, {DURATION_HOLD_CODES[code]})"
        result = record.scheduler_time_limit(trial, state, message)
        result.provenance.scheduler, result.provenance.job_id = "htcondor", job.job_id
        if job.host:
            result.provenance.host = job.host
        record.finish(
            trial,
            state,
            result,
            by="htcondor job log",
            ended_at=when,
            attempt_outcome="held: scheduler time limit",
            job_id=job.job_id,
            reason=message,
        )
        return True


__all__ = ["HTCondorBackend", "CondorJobs", "CondorSubmission", "Rendered", "load_jobs", "record_time_limit"]
