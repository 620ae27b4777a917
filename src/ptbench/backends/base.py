"""The small protocol every backend implements."""

from __future__ import annotations

import sys
from typing import Protocol, runtime_checkable

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
