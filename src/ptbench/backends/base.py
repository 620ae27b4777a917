"""The small protocol every backend implements."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ptbench.plan import Plan
from ptbench.spec import Campaign
from ptbench.trial import TrialDir, TrialSpec


def runner_argv(trial: TrialDir) -> list[str]:
    """The one command every backend runs for a trial."""
    return [sys.executable, "-m", "ptbench", "trial", "run", str(trial.path)]


@runtime_checkable
class Backend(Protocol):
    name: str

    def submit(self, plan: Plan, trials: list[TrialDir]) -> str | dict[str, Any]:
        """Start (or queue) the given trials; persist job ids in the campaign directory. Returns the
        submission's job id (Slurm array), cluster ids (HTCondor) or runner exit codes (local)."""

    def scheduler_states(self, campaign_dir: Path, trials: list[TrialDir], *, strict: bool = False) -> dict[str, str]:
        """trial id -> scheduler state (queued, running, ..., ended) in as few scheduler calls as
        possible. With `strict` (submit) a scheduler that cannot answer is an error, not an empty view."""

    def cancel(self, campaign_dir: Path, trials: list[TrialDir]) -> list[str]:
        """Mark the trials cancelled and stop their jobs; returns the job ids (or trial ids) stopped."""

    def render(self, campaign: Campaign, specs: list[TrialSpec], out: str | None) -> str:
        """Write the submit file `submit` would use, without submitting; return its path."""

    def log_path(self, campaign_dir: Path, trial: TrialDir) -> Path | None:
        """Where the trial's (latest) job log is, for `ptbench status` to show on failures; None if unknown."""
