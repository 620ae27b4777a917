"""The `slurm` backend: a campaign's trials as one Slurm job array, submitted through submitit.

Array task i runs `ptbench trial run <trial i>` (a pickled `TrialJob`). Everything a cluster user
sets comes from the campaign: `backend.options` (see `SlurmOptions`), the GPUs from
`budget.gpus`/`budget.gpu_type` (gres with type), `--time` from `budget.scheduler_minutes`
(budget + grace + evaluation + margin, so the watchdog acts first), the array throttle from
`parallelism`. Jobs are `--requeue`able; a requeued job resumes the trial with the budget left.

Job ids live in `<campaign>/jobs.json`; submitit's folder `<campaign>/slurm/` holds the sbatch
script of each submission, the pickles and one log per array task.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from ptbench.backends.slurm import cmd as slurm_cmd
from ptbench.backends.slurm.jobs import JobTable
from ptbench.core.errors import UserError
from ptbench.core.files import atomic_write_text
from ptbench.plan import Plan
from ptbench.spec.campaign import Budget, Campaign, Strict
from ptbench.trial import TrialDir, TrialSpec

# The sbatch comment every submission carries, so a reader of the script knows what runs.
_WHAT_RUNS = "# array task i runs `{python} -m ptbench trial run TRIAL_DIR` for the i-th trial of the submission (listed in {listing})"


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
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        if err["type"] == "extra_forbidden":
            known = ", ".join(SlurmOptions.model_fields)
            raise UserError(
                f"backend.options.{where}: not a Slurm option (known: {known}; other sbatch flags go under `sbatch:`)"
            ) from None
        raise UserError(f"backend.options.{where}: {err['msg']}") from None


def default_gres(budget: Budget, opts: SlurmOptions) -> str | None:
    if opts.gres is not None:
        return opts.gres or None
    if budget.gpus <= 0:
        return None
    gpu_type = opts.gpu_type or (budget.gpu_type.lower() if budget.gpu_type else None)
    return f"gpu:{gpu_type}:{budget.gpus}" if gpu_type else f"gpu:{budget.gpus}"


class SlurmBackend:
    name = "slurm"

    def __init__(self, **options: Any) -> None:
        self.options = parse_options(options)

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
        """Write the sbatch script `submit` would hand to Slurm (and the array's trial list beside it)."""
        cdir = campaign.campaign_dir
        path = Path(out) if out else cdir / "submit" / "slurm.sh"
        self.render_array(self.sbatch_parameters(campaign), cdir / "slurm", len(specs), path)
        atomic_write_text(
            path.with_suffix(".trials.txt"), "".join(f"{i}\t{cdir / s.trial_id}\n" for i, s in enumerate(specs))
        )
        return str(path)

    def render_array(self, params: dict[str, Any], folder: Path, count: int, path: Path) -> None:
        """The sbatch script for an array of `count` tasks with `params`, as submit would write it."""
        path.parent.mkdir(parents=True, exist_ok=True)
        # the command line submitit's SlurmExecutor writes into every script it submits
        command = " ".join([self.python, "-u -m submitit.core._submit", str(folder)])
        atomic_write_text(path, _sbatch_script(command, folder, count, params))

    def submit_array(self, folder: Path, fn: Any, args: list[list[Any]], params: dict[str, Any]) -> list[Any]:
        """Submit `fn(a[i], b[i], ...)` for `args = [a, b, ...]` as one job array; nothing stays behind when sbatch refuses."""
        try:
            from submitit import SlurmExecutor
        except ImportError:
            raise UserError("the slurm backend needs submitit: pip install 'ptbench[slurm]'") from None
        folder.mkdir(parents=True, exist_ok=True)
        before = set(os.listdir(folder))
        try:
            executor = SlurmExecutor(folder=folder, python=self.python)
        except RuntimeError:
            raise UserError(
                "`srun` is not on PATH: this machine is not a Slurm submit host (load the Slurm module or use another backend)"
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
            raise UserError(
                f"Slurm refused the submission: {why}; nothing was submitted (check `sinfo`, and "
                f"partition/account/qos in backend.options)"
            ) from None
        for name in set(os.listdir(folder)) - before:
            if name.startswith(".submission_file_"):
                (folder / name).unlink()  # submitit's symlink to the script it renamed
        return jobs

    # ---- submit ----------------------------------------------------------------------------
    def submit(self, plan: Plan, trials: list[TrialDir]) -> str:
        """Submit `trials` as one job array; returns the Slurm job id. Nothing is recorded unless sbatch accepted it."""
        if not trials:
            raise UserError("nothing to submit")
        campaign, cdir = plan.campaign, plan.campaign_dir
        folder = cdir / "slurm"
        jobs = self.submit_array(
            folder, self.job(campaign), [[str(t.path) for t in trials]], self.sbatch_parameters(campaign)
        )
        job_ids = [j.job_id for j in jobs]
        array_id = job_ids[0].split("_")[0]
        script = folder / f"{array_id}_submission.sh"
        with JobTable.locked(cdir, "slurm") as table:
            table.add_submission(
                array_id, {t.id: j for t, j in zip(trials, job_ids)}, script=str(script), folder=str(folder)
            )
        for t, j in zip(trials, job_ids):
            t.event("submitted", scheduler="slurm", job_id=j)
        return array_id

    # ---- track -----------------------------------------------------------------------------
    def scheduler_states(self, campaign_dir: Path, trials: list[TrialDir], *, strict: bool = False) -> dict[str, str]:
        """trial id -> queued | running | suspended (live jobs), failed for a job that ended before its
        runner started, ended for any other finished job; one squeue call, and one sacct call only for
        jobs squeue forgot. `strict` (for submit) refuses to guess when squeue fails: resubmitting
        trials whose jobs may still be queued would double them."""
        table = JobTable.load(campaign_dir)
        wanted = {t.id: table.trials[t.id] for t in trials if t.id in table.trials}
        if not wanted:
            return {}
        arrays = sorted({j.split("_")[0] for j in wanted.values()})
        try:
            jobs = slurm_cmd.squeue(arrays)
        except slurm_cmd.SlurmUnavailable as exc:
            if strict:
                raise UserError(
                    f"cannot tell which trials are still queued: {exc}; nothing was submitted (try again when squeue answers)"
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
        job_id = JobTable.load(campaign_dir).trials.get(trial.id)
        if job_id is None:
            return None
        return Path(campaign_dir) / "slurm" / f"{job_id}_0_log.out"

    # ---- cancel ----------------------------------------------------------------------------
    def cancel(self, campaign_dir: Path, trials: list[TrialDir]) -> list[str]:
        """Mark the trials cancelled, then scancel their jobs in one call; returns the job ids."""
        table = JobTable.load(campaign_dir)
        for t in trials:
            t.cancel_marker.touch()
        job_ids = sorted({table.trials[t.id] for t in trials if t.id in table.trials})
        slurm_cmd.scancel(job_ids)
        return job_ids


def _remove_new_files(folder: Path, before: set[str]) -> None:
    """Pickles and script submitit wrote for a submission sbatch refused: nothing half-submitted stays."""
    for name in set(os.listdir(folder)) - before:
        try:
            (folder / name).unlink()
        except OSError:
            pass


def _sbatch_script(command: str, folder: Path, count: int, params: dict[str, Any]) -> str:
    # submitit has no public function for the script text it submits; its private writer is used
    # here only, so `render` shows exactly what `submit` hands to sbatch.
    from submitit.slurm.slurm import _make_sbatch_string

    return _make_sbatch_string(command=command, folder=folder, map_count=count if count > 1 else None, **params)
