"""The `slurm` backend: a campaign's trials as Slurm job arrays, submitted through submitit.

Array task i runs `ptbench trial run <trial i>` (a pickled `TrialJob`). Everything a cluster user
sets comes from the campaign: `backend.options` (see `SlurmOptions`), the GPUs from
`budget.gpus`/`budget.gpu_type` (gres with type), `--time` from `budget.scheduler_minutes`
(budget + grace + evaluation + margin, so the watchdog acts first), the array throttle from
`parallelism`. Jobs are `--requeue`able; a requeued job resumes the trial with the budget left.

One array when it fits the controller's limits (`scontrol show config`: MaxArraySize, 1001 by
default, and MaxJobCount), else as many as needed, the throttle shared among them by size. When a
per-user submit limit (QOS MaxSubmitJobsPerUser, the association's MaxSubmitJobs) refuses an
array, smaller ones are tried; what was accepted stays on record, the rest under `left` in
jobs.json, and the next `ptbench submit` sends only what is neither finished nor queued.

Job ids live in `<campaign>/jobs.json`; submitit's folder `<campaign>/slurm/` holds the sbatch
script of each submission, the pickles and one log per array task.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from ptbench.backends.base import Submitted, UnitArray, UnitState
from ptbench.backends.jobs import JobsFile, Kind
from ptbench.backends.registry import BACKENDS
from ptbench.backends.slurm import cmd as slurm_cmd
from ptbench.backends.slurm import units
from ptbench.backends.slurm.private_submitit import SUBMITIT_SUBMIT_MODULE, submitit_sbatch_script
from ptbench.core.errors import UserError
from ptbench.core.files import atomic_write_text
from ptbench.core.preflight import Check, probe
from ptbench.core.validation import option_problem
from ptbench.plan import Plan
from ptbench.spec.campaign import Budget, Campaign, Strict
from ptbench.trial import TrialDir, TrialSpec

# The sbatch comment every submission carries, so a reader of the script knows what runs.
_WHAT_RUNS = (
    "# array task i runs `{python} -m ptbench trial run TRIAL_DIR` for the i-th trial of the submission "
    "(listed in {listing})"
)


class SlurmOptions(Strict):
    """`backend.options` of a campaign with `backend: slurm`."""

    partition: str | None = None
    account: str | None = None
    qos: str | None = None
    constraint: str | None = Field(default=None, description="node features, e.g. 'h100&ib'")
    gres: str | None = Field(
        default=None, description="explicit --gres (default: gpu[:TYPE]:N from the budget); '' for none"
    )
    gpu_type: str | None = Field(
        default=None, description="the site's gres type name for budget.gpu_type (default: gpu_type in lower case)"
    )
    cpus_per_task: int | None = Field(default=None, ge=1)
    mem_gb: float | None = Field(default=None, gt=0)
    setup: list[str] = Field(
        default_factory=list, description="shell lines before the job starts (module load, venv activation)"
    )
    sbatch: dict[str, Any] = Field(
        default_factory=dict, description="any other sbatch option, e.g. {mail-type: END, exclude: node7}"
    )
    signal_seconds: int = Field(
        default=90, ge=0, description="the runner is signalled this long before --time ends, to checkpoint"
    )
    requeue: bool = Field(default=True, description="--requeue: preempted or failed-node jobs come back and resume")
    job_name: str | None = None
    python: str | None = Field(default=None, description="python on the nodes (default: the one running ptbench)")


def parse_options(options: dict[str, Any]) -> SlurmOptions:
    try:
        return SlurmOptions(**options)
    except ValidationError as exc:
        raise option_problem(exc, SlurmOptions, "a Slurm option", "other sbatch flags go under `sbatch:`") from None


def default_gres(budget: Budget, opts: SlurmOptions) -> str | None:
    if opts.gres is not None:
        return opts.gres or None
    if budget.gpus <= 0:
        return None
    gpu_type = opts.gpu_type or (budget.gpu_type.lower() if budget.gpu_type else None)
    return f"gpu:{gpu_type}:{budget.gpus}" if gpu_type else f"gpu:{budget.gpus}"


@BACKENDS.register("slurm")
class SlurmBackend:
    name = "slurm"
    options_model = SlurmOptions
    extra = "slurm"
    runs_here = False
    waits = True

    @staticmethod
    def job_identity(environ: Mapping[str, str]) -> str | None:
        """The job as squeue and scancel name it: an array task `A_i`, else the job id."""
        array, task = environ.get("SLURM_ARRAY_JOB_ID"), environ.get("SLURM_ARRAY_TASK_ID")
        if environ.get("SLURM_JOB_ID") and array and task:
            return f"{array}_{task}"
        return environ.get("SLURM_JOB_ID") or None

    def preflight(self) -> list[Check]:
        """The controller answers (sinfo) and submitit, which writes and submits the scripts, is installed."""
        rc, out = probe(["sinfo", "-h", "-o", "%P %a %D"])
        if rc != 0:
            answer = Check(
                "scheduler (slurm)",
                "fail",
                out[-200:] or f"sinfo exited {rc}",
                "load the Slurm module / set SLURM_CONF; sinfo must answer",
            )
        else:
            partitions = ", ".join(line.split()[0] for line in out.splitlines() if line.strip())
            answer = Check("scheduler (slurm)", "ready", "partitions: " + partitions[:200])
        try:
            client = Check("slurm client", "ready", self.check_client())
        except UserError as exc:
            fix = f"pip install 'ptbench[{self.extra}]' on this (the submitting) node"
            client = Check("slurm client", "fail", str(exc), fix)
        return [answer, client]

    def __init__(self, **options: Any) -> None:
        self.options = parse_options(options)
        self._limits: slurm_cmd.Limits | None = None

    @staticmethod
    def check_client() -> str:
        """Before anything is planned or written: submitit is installed (`submit` and `render` alike)."""
        return f"submitit {getattr(submitit_client(), '__version__', '')}".strip()

    # ---- what would be submitted ---------------------------------------------------------
    def sbatch_parameters(self, campaign: Campaign) -> dict[str, Any]:
        """submitit `SlurmExecutor` parameters (its names = sbatch flags) for an array of the campaign's trials."""
        what_runs = _WHAT_RUNS.format(python=self.python, listing=campaign.campaign_dir / "jobs.json")
        return self.array_parameters(
            name=f"ptbench-{campaign.name}",
            minutes=campaign.budget.scheduler_minutes,
            parallelism=campaign.parallelism,
            gres=default_gres(campaign.budget, self.options),
            what_runs=what_runs,
        )

    def array_parameters(
        self, *, name: str, minutes: int, parallelism: int, gres: str | None, what_runs: str
    ) -> dict[str, Any]:
        """The parameters of any job array this backend submits — trials, rollout shards, tool servers —
        from the same `backend.options`, so account, qos, gres, setup and sbatch extras apply to all."""
        opts = self.options
        lead = min(opts.signal_seconds, minutes * 60 // 2)
        extra: dict[str, Any] = {}
        if opts.requeue:
            extra["requeue"] = True
        extra.update(opts.sbatch)
        params: dict[str, Any] = {
            "job_name": opts.job_name or name,
            "time": minutes,
            "signal_delay_s": lead,
            "array_parallelism": parallelism,
            "stderr_to_stdout": True,
            "wckey": None,  # submitit would send "submitit"; sites that enforce wckeys refuse unknown ones
            "setup": [what_runs, *opts.setup],
            "additional_parameters": extra,
        }
        for key in ("partition", "account", "qos", "constraint", "cpus_per_task"):
            if getattr(opts, key) is not None:
                params[key] = getattr(opts, key)
        if opts.mem_gb is not None:
            params["mem"] = (
                f"{int(opts.mem_gb)}GB" if opts.mem_gb == int(opts.mem_gb) else f"{int(opts.mem_gb * 1024)}MB"
            )
        if opts.gres is not None:
            gres = opts.gres or None
        if gres:
            params["gres"] = gres
        return params

    @property
    def python(self) -> str:
        return self.options.python or sys.executable

    def job(self, campaign: Campaign) -> Any:
        from ptbench.backends.slurm.job import TrialJob

        minutes = campaign.budget.scheduler_minutes
        return TrialJob(minutes * 60, min(self.options.signal_seconds, minutes * 60 // 2), self.options.python)

    def render(self, campaign: Campaign, specs: list[TrialSpec], out: str | None) -> str:
        """Write the sbatch script `submit` would hand to Slurm (one per array when the controller's
        limits split the campaign: slurm.sh, slurm.2.sh, ...) and the arrays' trial list beside it."""
        self.check_client()  # the script is submitit's: without it, one line before anything is written
        cdir = campaign.campaign_dir
        path = Path(out) if out else cdir / "submit" / "slurm.sh"
        params = self.sbatch_parameters(campaign)
        sizes = self.array_sizes(len(specs)) or [0]
        listing, start = [], 0
        for k, size in enumerate(sizes):
            script = path if k == 0 else path.with_name(f"{path.stem}.{k + 1}{path.suffix}")
            throttle = _share(params.get("array_parallelism"), size, max(1, len(specs)))
            self.render_array({**params, "array_parallelism": throttle}, cdir / "slurm", size, script)
            tag = "" if len(sizes) == 1 else f"{k + 1}:"
            listing += [f"{tag}{i}\t{cdir / s.trial_id}\n" for i, s in enumerate(specs[start : start + size])]
            start += size
        atomic_write_text(path.with_suffix(".trials.txt"), "".join(listing))
        return str(path)

    def render_array(self, params: dict[str, Any], folder: Path, count: int, path: Path) -> None:
        """The sbatch script for an array of `count` tasks with `params`, as submit would write it."""
        path.parent.mkdir(parents=True, exist_ok=True)
        # the command line submitit's SlurmExecutor writes into every script it submits
        command = " ".join([self.python, "-u -m", SUBMITIT_SUBMIT_MODULE, str(folder)])
        atomic_write_text(path, _sbatch_script(command, folder, count, params))

    def submit_array(self, folder: Path, fn: Any, args: list[list[Any]], params: dict[str, Any]) -> list[Any]:
        """Submit `fn(a[i], b[i], ...)` for `args = [a, b, ...]` as one job array; nothing stays behind when
        sbatch refuses (`SlurmRefused`, with sbatch's line)."""
        SlurmExecutor = submitit_client().SlurmExecutor
        folder.mkdir(parents=True, exist_ok=True)
        before = set(os.listdir(folder))
        try:
            executor = SlurmExecutor(folder=folder, python=self.python)
        except RuntimeError:
            raise UserError(
                "`srun` is not on PATH: this machine is not a Slurm submit host (load the Slurm module or use another "
                "backend)"
            ) from None
        executor.update_parameters(**params)
        try:
            # submitit prints sbatch's stderr itself; the user gets one line from us instead
            with contextlib.redirect_stderr(io.StringIO()):
                jobs = executor.map_array(fn, *args)
        except Exception as exc:  # sbatch refused, or could not reach slurmctld
            _remove_new_files(folder, before)
            why = slurm_cmd.sbatch_refusal(exc)
            if "controller" in why.lower():
                raise UserError(
                    f"cannot reach slurmctld: {why}; nothing was submitted (is the controller up? check `sinfo`)"
                ) from None
            raise SlurmRefused(why) from None
        for name in set(os.listdir(folder)) - before:
            if name.startswith(".submission_file_"):
                (folder / name).unlink()  # submitit's symlink to the script it renamed
        return jobs

    def limits(self) -> slurm_cmd.Limits:
        if self._limits is None:
            self._limits = slurm_cmd.limits()
        return self._limits

    def array_sizes(self, count: int) -> list[int]:
        """How `count` units are split into arrays that fit MaxArraySize and MaxJobCount."""
        lim = self.limits()
        size = max(1, min(lim.max_array_size, lim.max_job_count))
        return [min(size, count - start) for start in range(0, count, size)]

    def submit_arrays(
        self,
        folder: Path,
        fn: Any,
        args: list[list[Any]],
        params: dict[str, Any],
        *,
        on_array: Callable[[int, list[Any]], None] | None = None,
        partial: bool = False,
    ) -> tuple[list[Any], str | None]:
        """Submit as many arrays as the controller's limits need (`array_sizes`), in order; `on_array(start,
        jobs)` records each as it is accepted. The campaign's throttle (`array_parallelism`) is shared
        among the arrays by size. When a submit limit (QOS/association MaxSubmitJobs, MaxJobCount) refuses
        an array, smaller ones are tried until one task is refused. Returns (jobs accepted, the refusal
        or None). A refusal with nothing accepted raises; with `partial` False, the accepted arrays are
        cancelled and it raises too (all or nothing)."""
        count = len(args[0])
        throttle = params.get("array_parallelism")
        size = self.array_sizes(count)[0] if count else 0
        jobs: list[Any] = []
        refused: str | None = None
        start = 0
        while start < count:
            take = min(size, count - start)
            chunk = {**params, "array_parallelism": _share(throttle, take, count)}
            try:
                got = self.submit_array(folder, fn, [a[start : start + take] for a in args], chunk)
            except SlurmRefused as exc:
                if take > 1 and slurm_cmd.is_submit_limit(exc.why):
                    size = take // 2
                    continue
                refused = exc.why
                break
            except UserError as exc:  # slurmctld stopped answering between two arrays
                if not (jobs and partial):
                    raise
                refused = str(exc)
                break
            if on_array is not None:
                on_array(start, got)
            jobs.extend(got)
            start += take
        if refused is not None and (not jobs or not partial):
            arrays = sorted({j.job_id.split("_")[0] for j in jobs})
            if arrays:
                slurm_cmd.scancel(arrays)
            hint = (
                "a submit limit: wait until jobs have left the queue, or ask for a larger limit (`sacctmgr show qos`)"
                if slurm_cmd.is_submit_limit(refused)
                else "check `sinfo`, and partition/account/qos in backend.options"
            )
            raise UserError(
                f"Slurm refused the submission: {refused}; nothing was submitted"
                + (f" (arrays {', '.join(arrays)} accepted before it were cancelled)" if arrays else "")
                + f" ({hint})"
            )
        return jobs, refused

    # ---- submit ----------------------------------------------------------------------------
    def submit(self, plan: Plan, trials: list[TrialDir]) -> Submitted:
        """Submit `trials` as job arrays that fit the controller's limits; each array is recorded in
        jobs.json as soon as sbatch accepts it. When a submit limit refuses the rest, what was accepted
        stays on record with the rest under `left`, and `ptbench submit` again sends only those."""
        if not trials:
            raise UserError("nothing to submit")
        campaign, cdir = plan.campaign, plan.campaign_dir
        folder = cdir / "slurm"
        arrays: list[str] = []

        def record(start: int, jobs: list[Any]) -> None:
            chunk = trials[start : start + len(jobs)]
            job_ids = [j.job_id for j in jobs]
            array_id = job_ids[0].split("_")[0]
            with JobsFile.locked(cdir, "slurm") as table:
                table.add_submission(
                    array_id,
                    {t.id: j for t, j in zip(chunk, job_ids, strict=True)},
                    script=str(folder / f"{array_id}_submission.sh"),
                    folder=str(folder),
                )
                table.left = [t.id for t in trials[start + len(jobs) :]]
            for t, j in zip(chunk, job_ids, strict=True):
                t.event("submitted", scheduler="slurm", job_id=j)
            arrays.append(array_id)

        jobs, refused = self.submit_arrays(
            folder,
            self.job(campaign),
            [[str(t.path) for t in trials]],
            self.sbatch_parameters(campaign),
            on_array=record,
            partial=True,
        )
        return Submitted(job_ids=arrays, units=len(jobs), left=len(trials) - len(jobs), refused=refused, noun="job")

    # ---- track -----------------------------------------------------------------------------
    def scheduler_states(self, campaign_dir: Path, trials: list[TrialDir], *, strict: bool = False) -> dict[str, str]:
        """trial id -> queued | running | suspended (live jobs), failed for a job that ended before its
        runner started, ended for any other finished job; one squeue call, and one sacct call only for
        jobs squeue forgot. `strict` (for submit) refuses to guess when squeue fails: resubmitting
        trials whose jobs may still be queued would double them."""
        table = JobsFile.load(campaign_dir) or JobsFile(backend="slurm")
        wanted = {t.id: table.units[t.id] for t in trials if t.id in table.units}
        if not wanted:
            return {}
        arrays = sorted({j.split("_")[0] for j in wanted.values()})
        try:
            jobs = slurm_cmd.squeue(arrays)
        except slurm_cmd.SlurmUnavailable as exc:
            if strict:
                raise UserError(
                    f"cannot tell which trials are still queued: {exc}; nothing was submitted (try again when squeue "
                    "answers)"
                ) from None
            print(f"warning: no scheduler states ({exc}); showing what the trial folders say", file=sys.stderr)
            return {}
        missing = sorted({j.split("_")[0] for j in wanted.values() if j not in jobs})
        if missing and (accounted := slurm_cmd.sacct(missing)):
            jobs.update({k: v for k, v in accounted.items() if k not in jobs})
        by_id = {t.id: t for t in trials}
        states = {}
        for tid, job_id in wanted.items():
            info = jobs.get(job_id)
            if info is None:
                continue
            state = slurm_cmd.trial_state(info.state)
            if (
                state is None
                and info.state in slurm_cmd.ENDED
                and info.state != "COMPLETED"
                and not by_id[tid].state_json.exists()
            ):
                state = "failed"  # the job died before the runner could write anything: see its log
            elif state is None and info.state in slurm_cmd.ENDED:
                state = "ended"  # a runner's pid file may say otherwise if the node killed it (-9, OOM, NODE_FAIL)
            if state:
                states[tid] = state
        return states

    def log_path(self, campaign_dir: Path, trial: TrialDir) -> Path | None:
        """The Slurm log of the trial's latest job (submitit's `%A_%a_0_log.out`)."""
        table = JobsFile.load(campaign_dir)
        job_id = table.units.get(trial.id) if table else None
        if job_id is None:
            return None
        return Path(campaign_dir) / "slurm" / f"{job_id}_0_log.out"

    # ---- argv units (rollout shards, tool-server replicas): slurm/units.py ----------------------
    def prepare_units(self, arrays: list[UnitArray]) -> None:
        return None  # the options were checked when this backend was made

    def render_units(self, array: UnitArray, path: Path | None = None) -> Path:
        return units.render(self, array, path)

    def submit_units(self, array: UnitArray) -> Submitted:
        return units.submit(self, array)

    def wait_units(self, submitted: Submitted, poll: Any = None) -> dict[str, int]:
        return units.wait(submitted, poll)

    def stop_units(self, array: UnitArray, submitted: Submitted) -> None:
        units.stop(submitted)

    def unit_states(self, folder: Path, kind: Kind) -> dict[str, UnitState]:
        return units.states(folder, kind)

    # ---- cancel ----------------------------------------------------------------------------
    def cancel(self, campaign_dir: Path, trials: list[TrialDir]) -> list[str]:
        """Mark the trials cancelled, then scancel their jobs in one call; returns the job ids."""
        table = JobsFile.load(campaign_dir) or JobsFile(backend="slurm")
        for t in trials:
            t.cancel_marker.touch()
        job_ids = sorted({table.units[t.id] for t in trials if t.id in table.units})
        slurm_cmd.scancel(job_ids)
        return job_ids


class SlurmRefused(UserError):
    """sbatch refused an array (its line in `why`); nothing of that array stays behind."""

    def __init__(self, why: str) -> None:
        super().__init__(f"Slurm refused the submission: {why}")
        self.why = why


def _share(throttle: int | None, size: int, total: int) -> int | None:
    """An array's part of the campaign's parallelism: Slurm throttles each array (`%N`) on its own."""
    if not throttle:
        return throttle
    return max(1, round(throttle * size / total))


def _remove_new_files(folder: Path, before: set[str]) -> None:
    """Pickles and script submitit wrote for a submission sbatch refused: nothing half-submitted stays."""
    for name in set(os.listdir(folder)) - before:
        try:
            (folder / name).unlink()
        except OSError:
            pass


def _sbatch_script(command: str, folder: Path, count: int, params: dict[str, Any]) -> str:
    # `render` shows exactly what `submit` hands to sbatch (submitit's private writer, wrapped).
    return submitit_sbatch_script(command=command, folder=folder, map_count=count if count > 1 else None, **params)


def submitit_client() -> Any:
    """submitit, or one line naming the extra: the one check `render` and `submit` share."""
    try:
        import submitit
        import submitit.slurm.slurm  # noqa: F401  (what the rendered script is made by)
    except ImportError:
        raise UserError("the slurm backend needs submitit: pip install 'ptbench[slurm]'") from None
    return submitit
