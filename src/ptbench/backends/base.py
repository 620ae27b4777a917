"""The small protocol every backend implements."""

from __future__ import annotations

import sys
from typing import Protocol, runtime_checkable

from ptbench.errors import UserError
from ptbench.plan import Plan
from ptbench.trial import TrialDir


def runner_argv(trial: TrialDir) -> list[str]:
    """The one command every backend runs for a trial."""
    return [sys.executable, "-m", "ptbench", "trial", "run", str(trial.path)]


@runtime_checkable
class Backend(Protocol):
    name: str

    def submit(self, plan: Plan, trials: list[TrialDir]) -> None:
        """Start (or queue) the given trials; persist job ids in the campaign directory."""

    def scheduler_states(self, plan_dir, trials: list[TrialDir], *, strict: bool = False) -> dict[str, str]:
        """trial id -> scheduler state (queued, running, ..., ended) in as few scheduler calls as
        possible. With `strict` (submit) a scheduler that cannot answer is an error, not an empty view."""

    def cancel(self, plan_dir, trials: list[TrialDir]) -> None:
        """Stop the trials' jobs (the CLI writes `cancel_requested` markers first)."""

    def render(self, campaign, specs, out: str | None) -> str:
        """Write the submit file `submit` would use, without submitting; return its path."""

    def log_path(self, campaign_dir, trial: TrialDir):
        """Where the trial's (latest) job log is, for `ptbench status` to show on failures; None if unknown."""


def get_backend(name: str, options: dict | None = None) -> Backend:
    options = options or {}
    if name == "local":
        from ptbench.backends.local import LocalBackend

        return LocalBackend(**options)
    if name == "slurm":
        from ptbench.backends.slurm import SlurmBackend

        return SlurmBackend(**options)
    if name == "htcondor":
        from ptbench.backends.htcondor import HTCondorBackend

        return HTCondorBackend(**options)
    raise UserError(f"unknown backend '{name}' (use local, slurm or htcondor)")
