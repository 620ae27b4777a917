"""The protocol every backend implements, and the arrays of argv units it submits.

Everything a backend runs is an array of argv units: a campaign's trials (`ptbench trial run DIR`),
a rollout's shards (`ptbench bootcamp rollout-shard OUT --shard i/N`) and its tool-server replicas
(`ptbench bootcamp serve-tools --dir OUT --replica i`). A backend renders, submits, tracks and
cancels such an array, and records it in the folder's `jobs.json` (backends/jobs.py).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel

from ptbench.backends.jobs import Kind
from ptbench.core.preflight import Check
from ptbench.plan import Plan
from ptbench.spec import Campaign
from ptbench.trial import TrialDir, TrialSpec


def runner_argv(trial: TrialDir) -> list[str]:
    """The one command every backend runs for a trial."""
    return [sys.executable, "-m", "ptbench", "trial", "run", str(trial.path)]


@dataclass
class Unit:
    id: str  # trial id, shard tag or replica index: the key in jobs.json
    argv: list[str]
    log: Path | None = None  # local: where its output goes


@dataclass
class UnitArray:
    """An array of argv units to submit together, recorded in `folder/jobs.json` under `kind`."""

    kind: Kind
    name: str  # the job name the scheduler shows
    folder: Path
    units: list[Unit]
    minutes: int = 60  # the scheduler's time limit per unit
    parallelism: int | None = None  # at most this many at once (default: all)
    what_runs: str = ""  # one comment line for the submit script's reader
    extra: dict[str, Any] = field(default_factory=dict)  # backend-specific (HTCondor: shards of the rollout)


@dataclass
class UnitState:
    state: str  # queued | running | suspended | held | ended
    raw: str = ""  # the scheduler's own word (Slurm's CANCELLED, HTCondor's removed, a pid)


@dataclass
class Submitted:
    """What a submission did: the scheduler's ids (Slurm arrays, HTCondor clusters, local pids), how
    many units it accepted, how many a limit left for the next `ptbench submit`, and why."""

    job_ids: list[str]
    units: int
    left: int = 0
    refused: str | None = None
    codes: dict[str, int] = field(default_factory=dict)  # local: unit id -> exit code, when it waited
    handles: Any = None  # what the backend needs to wait for or stop the units (local: processes)
    noun: str = "array"  # what the scheduler calls one submission: array (Slurm), cluster (HTCondor)
    note: str = ""  # one more detail for the user (HTCondor: via which tool, where the job log is)

    def describe(self) -> str:
        """'array 123', 'arrays 123, 124', 'cluster 51 (via condor_submit; ...)'."""
        if not self.job_ids:
            return ""
        plural = "s" if len(self.job_ids) > 1 else ""
        return f"{self.noun}{plural} {', '.join(self.job_ids)}" + (f" ({self.note})" if self.note else "")


@runtime_checkable
class Backend(Protocol):
    """A backend class is registered in `backends.registry.BACKENDS` where it is defined and carries
    its own facts: name, options model, pip extra, job identity, preflight (docs/guides/add-a-scheduler.md)."""

    name: str
    options_model: type[BaseModel]  # its `backend.options`; the constructor takes them as keywords
    extra: str | None  # the pip extra its scheduler client comes with (`pip install 'ptbench[slurm]'`)
    runs_here: bool  # `submit` runs the trials in this process, to the end (local)
    waits: bool  # submitted units are waited for here (local, Slurm); on HTCondor nobody waits

    def __init__(self, **options: Any) -> None:
        """Parse `backend.options` with `options_model`: an `OptionProblem` (core.validation.option_problem) if
        they are not its options, which `validate` turns into file:line and the nearest key."""

    @staticmethod
    def job_identity(environ: Mapping[str, str]) -> str | None:
        """The job id of the job whose environment this is, as the scheduler's tools name it; None when
        it is not one of this backend's jobs. Registered into core/jobenv.py (the runner records it)."""

    def preflight(self) -> list[Check]:
        """What `ptbench doctor` reports about this backend on this node: its scheduler answers, its
        client library is installed. Looks, never changes anything."""

    def submit(self, plan: Plan, trials: list[TrialDir]) -> Submitted:
        """Start (or queue) the given trials and record their jobs in the campaign's jobs.json (local:
        run them here to the end). Units a scheduler limit refused are counted in `left`."""

    def scheduler_states(self, campaign_dir: Path, trials: list[TrialDir], *, strict: bool = False) -> dict[str, str]:
        """trial id -> scheduler state (queued, running, ..., ended) in as few scheduler calls as
        possible. With `strict` (submit) a scheduler that cannot answer is an error, not an empty view."""

    def cancel(self, campaign_dir: Path, trials: list[TrialDir]) -> list[str]:
        """Mark the trials cancelled and stop their jobs; returns the job ids (or trial ids) stopped."""

    def render(self, campaign: Campaign, specs: list[TrialSpec], out: str | None) -> str:
        """Write the submit file `submit` would use, without submitting; return its path."""

    def log_path(self, campaign_dir: Path, trial: TrialDir) -> Path | None:
        """Where the trial's (latest) job log is, for `ptbench status` to show on failures; None if unknown."""

    def submit_units(self, array: UnitArray) -> Submitted:
        """Submit an array of argv units (rollout shards, tool-server replicas) with this backend's
        options, all or nothing, and record them in `array.folder/jobs.json`."""

    def prepare_units(self, arrays: list[UnitArray]) -> None:
        """Check that every array can be submitted (options, descriptions) before any is: one line if not."""

    def render_units(self, array: UnitArray, path: Path | None = None) -> Path:
        """Write what `submit_units` would submit, without submitting (default: the backend's place
        under `array.extra["out"]`); return its path."""

    def wait_units(self, submitted: Submitted, poll: Any = None) -> dict[str, int]:
        """Wait until every unit ended (calling `poll()` now and then); unit id -> exit code (0 ok).
        A backend whose scheduler nobody waits on (HTCondor) returns at once with {}."""

    def stop_units(self, array: UnitArray, submitted: Submitted) -> None:
        """Stop the units that still run (the replicas when their rollout ends) and wait until none does."""

    def unit_states(self, folder: Path, kind: Kind) -> dict[str, UnitState]:
        """unit id -> scheduler state of the units in `folder/jobs.json`, in one scheduler call; a unit
        the scheduler does not know is left out."""
