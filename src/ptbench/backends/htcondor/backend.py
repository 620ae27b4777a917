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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ptbench.backends.base import Submitted, UnitArray, UnitState
from ptbench.backends.htcondor import schedd as htcondor_schedd
from ptbench.backends.htcondor import units
from ptbench.backends.htcondor.joblog import DURATION_HOLD_CODES, JobView, read_job_log, scheduler_state
from ptbench.backends.htcondor.options import HTCondorOptions, parse_options
from ptbench.backends.htcondor.render import Rendered, render_trials
from ptbench.backends.jobs import JobsFile, Kind
from ptbench.backends.registry import BACKENDS
from ptbench.core.errors import UserError
from ptbench.core.files import append_jsonl, atomic_write_json, atomic_write_text
from ptbench.core.jobenv import BACKEND_ENV, JOB_ID_ENV
from ptbench.core.locks import file_lock
from ptbench.core.preflight import Check, probe
from ptbench.plan import Plan
from ptbench.runner import record
from ptbench.spec import Campaign
from ptbench.trial import TrialDir, TrialSpec


def condor_dir(campaign_dir: Path) -> Path:
    return Path(campaign_dir) / "condor"


def job_log(campaign_dir: Path) -> Path:
    return condor_dir(campaign_dir) / "jobs.log"


def load_jobs(campaign_dir: Path) -> JobsFile | None:
    """The campaign's job table when the htcondor backend wrote it."""
    jobs = JobsFile.load(campaign_dir)
    return jobs if jobs is not None and jobs.backend == "htcondor" else None


def unfinished_specs(campaign, specs) -> tuple[list, int]:
    """Specs whose trial has no result yet (what `submit` would send), and how many were left out."""
    todo = [s for s in specs if not (campaign.campaign_dir / s.trial_id / "result.json").exists()]
    return todo, len(specs) - len(todo)


@BACKENDS.register("htcondor")
class HTCondorBackend:
    name = "htcondor"
    options_model = HTCondorOptions
    extra = "condor"
    runs_here = False
    waits = False  # nobody waits on HTCondor: `ptbench status` reads the job log

    @staticmethod
    def job_identity(environ: Mapping[str, str]) -> str | None:
        """The job as condor_q names it, `Cluster.Proc`: set by our submit description, else read from
        the job ad HTCondor gives every job (a process started by hand inside one)."""
        if environ.get(BACKEND_ENV) == "htcondor" and environ.get(JOB_ID_ENV):
            return environ[JOB_ID_ENV]
        try:
            lines = Path(environ["_CONDOR_JOB_AD"]).read_text().splitlines()
        except (KeyError, OSError):
            return None
        ad = {k.strip(): v.strip() for k, _, v in (line.partition("=") for line in lines)}
        cluster, proc = ad.get("ClusterId"), ad.get("ProcId")
        return f"{cluster}.{proc}" if cluster and proc else None

    def preflight(self) -> list[Check]:
        """The collector answers, and the bindings or condor_submit that `submit` will use are here."""
        rc, out = probe(["condor_status", "-limit", "1", "-af", "Name"])
        if rc != 0:
            fix = "check CONDOR_CONFIG and that the collector is reachable"
            answer = Check("scheduler (htcondor)", "fail", out[-200:] or f"condor_status exited {rc}", fix)
        else:
            answer = Check("scheduler (htcondor)", "ready", "collector answers")
        try:
            client = Check("htcondor client", "ready", self.check_client())
        except UserError as exc:
            fix = f"pip install 'ptbench[{self.extra}]' on this (the submitting) node"
            client = Check("htcondor client", "fail", str(exc), fix)
        return [answer, client]

    def __init__(self, **options) -> None:
        self.opts: HTCondorOptions = parse_options(options)
        self._cache: tuple[tuple, dict[str, JobView]] | None = None

    def check_client(self) -> str:
        """Before anything is planned or written: the bindings or condor_submit that `submit` will use."""
        return htcondor_schedd.check_client(self.opts.submit_with)

    # ---- render / submit -------------------------------------------------------------------
    def render(self, campaign: Campaign, specs: list[TrialSpec], out: str | None) -> str:
        """The description `submit` would hand to the schedd; one per MAX_JOBS_PER_SUBMISSION trials
        (htcondor.sub, htcondor.2.sub, ...) when the schedd's limit splits the campaign."""
        todo, skipped = unfinished_specs(campaign, specs)
        size = htcondor_schedd.max_jobs_per_submission()
        chunks = [todo[i : i + size] for i in range(0, len(todo), size)] or [[]]
        path = Path(out) if out else campaign.campaign_dir / "submit" / "htcondor.sub"
        path.parent.mkdir(parents=True, exist_ok=True)
        if campaign.campaign_dir.is_dir():
            condor_dir(campaign.campaign_dir).mkdir(exist_ok=True)  # condor_submit needs the log's folder
        for k, chunk in enumerate(chunks):
            rendered = render_trials(campaign, chunk, self.opts, skipped=skipped)
            atomic_write_text(path if k == 0 else path.with_name(f"{path.stem}.{k + 1}{path.suffix}"), rendered.text)
        return str(path)

    def submit(self, plan: Plan, trials: list[TrialDir]) -> Submitted:
        """Submit the trials that have no live job, one cluster per MAX_JOBS_PER_SUBMISSION trials, each
        recorded as soon as the schedd accepted it. When the schedd refuses a later cluster (e.g.
        MAX_JOBS_PER_OWNER), what it accepted stays on record and the rest is left for the next submit."""
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
            return Submitted(job_ids=[], units=0, noun="cluster")
        size = htcondor_schedd.max_jobs_per_submission()
        chunks = [todo[i : i + size] for i in range(0, len(todo), size)]
        rendered = [render_trials(plan.campaign, [t.spec for t in chunk], self.opts) for chunk in chunks]
        condor_dir(cdir).mkdir(parents=True, exist_ok=True)
        clusters: list[str] = []
        done, refused, via = 0, None, ""
        for k, (chunk, text) in enumerate(zip(chunks, rendered, strict=True)):
            suffix = f"-{k + 1}" if len(chunks) > 1 else ""
            desc = condor_dir(cdir) / f"submit-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}{suffix}.sub"
            atomic_write_text(desc, text.text)
            try:
                cluster, via = htcondor_schedd.submit(desc, text.rows, self.opts.submit_with)
            except UserError as exc:
                if not clusters:
                    raise
                refused = str(exc)
                break
            ids = {tid: f"{cluster}.{i}" for i, tid in enumerate(text.trial_ids)}
            retries = self.opts.max_retries if self.opts.max_retries is not None else plan.campaign.max_requeues + 1
            with JobsFile.locked(cdir, "htcondor") as table:
                table.log = table.log or str(job_log(cdir))
                table.add_submission(str(cluster), ids, via=via, script=str(desc), max_retries=retries)
                table.left = [t.id for t in todo[done + len(chunk) :]]
            for t in chunk:
                t.event("submitted", scheduler="htcondor", job_id=ids[t.id], via=via)
            clusters.append(str(cluster))
            done += len(chunk)
        return Submitted(
            job_ids=clusters,
            units=done,
            left=len(todo) - done,
            refused=refused,
            noun="cluster",
            note=f"via {via}; log {job_log(cdir)}",
        )

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
        log = Path(jobs.log) if jobs and jobs.log else job_log(cdir)
        try:
            views = read_job_log(log) if log.exists() else None
        except (ImportError, OSError):
            views = None
        if views is not None:
            by_job = {job: tid for tid, job in (jobs.units.items() if jobs else ())}
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
        retries = {job: s.max_retries for s in (jobs.submissions if jobs else ()) for job in s.units.values()}
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

    # ---- argv units (rollout shards, tool-server replicas): htcondor/units.py -----------------
    def prepare_units(self, arrays: list[UnitArray]) -> None:
        for array in arrays:
            units.description(self.opts, array)  # every description valid before any is submitted

    def render_units(self, array: UnitArray, path: Path | None = None) -> Path:
        return units.render(self.opts, array, path or units.default_path(array))

    def submit_units(self, array: UnitArray) -> Submitted:
        return units.submit(self.opts, array, htcondor_schedd.max_jobs_per_submission())

    def wait_units(self, submitted: Submitted, poll: Any = None) -> dict[str, int]:
        return {}

    def stop_units(self, array: UnitArray, submitted: Submitted) -> None:
        units.stop(submitted, "ptbench: the rollout's shards were not submitted")

    def unit_states(self, folder: Path, kind: Kind) -> dict[str, UnitState]:
        return units.states(folder, kind)

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


def _views_from_queue(jobs: JobsFile) -> dict[str, JobView]:
    clusters = sorted({int(s.job_id) for s in jobs.submissions})
    entries = htcondor_schedd.query(clusters)
    by_job = {job: tid for tid, job in jobs.units.items()}
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
        message = (
            f"HTCondor held job {job.job_id}: {reason or 'time limit'} "
            f"(HoldReasonCode {code}, {DURATION_HOLD_CODES[code]})"
        )
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


__all__ = ["HTCondorBackend", "Rendered", "load_jobs", "record_time_limit"]
