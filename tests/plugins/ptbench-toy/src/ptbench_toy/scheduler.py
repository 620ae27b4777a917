"""`toy`: a scheduler backend from outside ptbench, as a site would write one (docs/guides/add-a-scheduler.md).

Its "scheduler" runs each trial as a subprocess here, one job id per trial in its own environment
variable (TOY_JOB_ID, which no ptbench module reads: the runner learns its job through
`job_identity`), at most `slots` at once, and `submit` returns when every job ended. It has its
own options model, a preflight for `ptbench doctor`, and records its jobs in the campaign's jobs.json.
It edits no ptbench file: it is registered by importing this module (the `ptbench.plugins` entry point).
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from ptbench.backends.base import Submitted, UnitArray, UnitState, runner_argv
from ptbench.backends.jobs import JobsFile, Kind
from ptbench.backends.registry import BACKENDS
from ptbench.core.errors import UserError
from ptbench.core.jobenv import BACKEND_ENV
from ptbench.core.preflight import Check
from ptbench.core.validation import option_problem
from ptbench.plan import Plan
from ptbench.spec import Campaign
from ptbench.spec.campaign import Strict
from ptbench.trial import TrialDir, TrialSpec

JOB_ENV = "TOY_JOB_ID"


class ToyOptions(Strict):
    """`backend.options` of a campaign with `backend: toy`."""

    slots: int = Field(default=2, ge=1, description="jobs running at once")
    job_prefix: str = Field(default="toy", pattern=r"^[a-z]+$", description="job ids are PREFIX-S.I")


@BACKENDS.register("toy")
class ToyBackend:
    name = "toy"
    options_model = ToyOptions
    extra = None  # needs no client library
    runs_here = False  # `ptbench run` submits to it, as to a cluster's scheduler
    waits = True

    def __init__(self, **options: Any) -> None:
        try:
            self.options = ToyOptions(**options)
        except ValidationError as exc:
            raise option_problem(exc, ToyOptions, "an option of the toy backend") from None

    @staticmethod
    def job_identity(environ: Mapping[str, str]) -> str | None:
        return environ.get(JOB_ENV) or None

    def preflight(self) -> list[Check]:
        return [Check("scheduler (toy)", "ready", f"{self.options.slots} slot(s); jobs run here as subprocesses")]

    def submit(self, plan: Plan, trials: list[TrialDir]) -> Submitted:
        """Run every trial as a job of its own (at most `slots` at once) and wait for all of them."""
        cdir = plan.campaign_dir
        logs = cdir / "toy-logs"
        logs.mkdir(exist_ok=True)
        with JobsFile.locked(cdir, self.name) as table:  # job ids PREFIX-S.I: submission S, its job I
            batch = f"{self.options.job_prefix}-{len(table.submissions) + 1}"
            jobs = {t.id: f"{batch}.{i}" for i, t in enumerate(trials)}
            table.add_submission(batch, jobs)
        codes: dict[str, int] = {}
        pending, running = list(trials), {}
        while pending or running:
            while pending and len(running) < self.options.slots:
                trial = pending.pop(0)
                env = {**os.environ, BACKEND_ENV: self.name, JOB_ENV: jobs[trial.id]}
                with open(logs / f"{trial.id}.log", "ab") as log:
                    running[trial.id] = subprocess.Popen(
                        runner_argv(trial), env=env, stdout=log, stderr=subprocess.STDOUT
                    )
            for tid, proc in list(running.items()):
                if proc.poll() is not None:
                    codes[tid] = proc.returncode
                    del running[tid]
            time.sleep(0.2)
        return Submitted(job_ids=sorted(jobs.values()), units=len(trials), codes=codes, noun="job")

    def scheduler_states(self, campaign_dir: Path, trials: list[TrialDir], *, strict: bool = False) -> dict[str, str]:
        return {}  # `submit` waited: no job of this scheduler outlives it

    def cancel(self, campaign_dir: Path, trials: list[TrialDir]) -> list[str]:
        for trial in trials:
            trial.cancel_marker.touch()
        return []

    def render(self, campaign: Campaign, specs: list[TrialSpec], out: str | None) -> str:
        raise UserError("the toy backend has no submit file")

    def log_path(self, campaign_dir: Path, trial: TrialDir) -> Path | None:
        return campaign_dir / "toy-logs" / f"{trial.id}.log"

    def submit_units(self, array: UnitArray) -> Submitted:
        raise UserError("the toy backend runs trials only")

    def prepare_units(self, arrays: list[UnitArray]) -> None:
        raise UserError("the toy backend runs trials only")

    def render_units(self, array: UnitArray, path: Path | None = None) -> Path:
        raise UserError("the toy backend runs trials only")

    def wait_units(self, submitted: Submitted, poll: Any = None) -> dict[str, int]:
        return {}

    def stop_units(self, array: UnitArray, submitted: Submitted) -> None:
        return None

    def unit_states(self, folder: Path, kind: Kind) -> dict[str, UnitState]:
        return {}
