"""The embedded `local` backend: trials, rollout shards and tool-server replicas as subprocesses here.

Trials: a parallelism limit, and GPU slots: each running trial gets its own `CUDA_VISIBLE_DEVICES`
from the GPUs this machine has. The foreground `ptbench run` (and `ptbench submit` on this backend,
with the plan it made) shows progress; `ptbench status` and `ptbench cancel` work from any other
shell through the trial directories. Argv units (shards, replicas): local/units.py.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from ptbench.backends.base import Submitted, UnitArray, UnitState, runner_argv
from ptbench.backends.jobs import Kind
from ptbench.backends.local import units
from ptbench.backends.registry import BACKENDS
from ptbench.core.errors import UserError
from ptbench.core.jobenv import BACKEND_ENV
from ptbench.core.preflight import Check
from ptbench.core.stopsignals import StopSignals
from ptbench.core.validation import option_problem
from ptbench.plan import Plan
from ptbench.spec import Campaign
from ptbench.spec.campaign import Strict
from ptbench.status import local_runner_pid, runner_alive
from ptbench.trial import TrialDir, TrialSpec


def visible_gpus() -> list[str]:
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        return [g for g in env.split(",") if g.strip() and g.strip() != "-1"]
    if not shutil.which("nvidia-smi"):
        return []
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return []
    return [str(i) for i, line in enumerate(out.stdout.splitlines()) if line.startswith("GPU ")]


def _drop_if_empty(log: Path) -> None:
    """A runner that printed nothing leaves no log: `status` never points at an empty file."""
    try:
        if log.stat().st_size == 0:
            log.unlink()
    except OSError:
        pass


class LocalOptions(Strict):
    """`backend.options` of a campaign with `backend: local`."""

    poll_seconds: float = Field(default=0.5, gt=0, description="how often finished runners are looked for")


@BACKENDS.register("local")
class LocalBackend:
    name = "local"
    options_model = LocalOptions
    extra = None  # starts processes itself: no scheduler client
    runs_here = True  # `submit` runs the trials to the end in this process
    waits = True

    @staticmethod
    def job_identity(environ: Mapping[str, str]) -> str | None:
        """A local runner is no scheduler's job."""
        return None

    def preflight(self) -> list[Check]:
        return [Check("scheduler (local)", "ready", f"{os.cpu_count()} CPU(s) on this machine")]

    def __init__(self, **options: Any) -> None:
        try:
            self.poll = LocalOptions(**options).poll_seconds
        except ValidationError as exc:  # e.g. a Slurm option left under `backend: local`
            raise option_problem(exc, LocalOptions, "an option of the local backend") from None

    def submit(
        self, plan: Plan, trials: list[TrialDir], *, parallelism: int | None = None, progress=None, tick=None
    ) -> Submitted:
        """Run `trials` to completion here; `codes` holds trial id -> runner exit code. `progress(trial,
        code)` is called as each runner ends, `tick(running trials)` on every poll (the live display)."""
        limit = parallelism or plan.campaign.parallelism
        free_gpus = deque(visible_gpus())
        pending = deque(trials)
        running: dict[str, tuple[subprocess.Popen, list[str], TrialDir]] = {}
        codes: dict[str, int] = {}
        logs = plan.campaign_dir / "logs"
        logs.mkdir(exist_ok=True)
        # Flag-only handlers, also over an inherited SIG_IGN: `ptbench run … &` in a script gets SIGINT
        # ignored, and a plain SIGTERM used to kill this loop and orphan the runners.
        stop = StopSignals()
        with stop if threading.current_thread() is threading.main_thread() else nullcontext():
            while (pending or running) and not stop.stopped:
                for tid, (proc, gpus, trial) in list(running.items()):
                    if proc.poll() is not None:
                        codes[tid] = proc.returncode
                        free_gpus.extend(gpus)
                        del running[tid]
                        _drop_if_empty(logs / f"{tid}.log")
                        if progress:
                            progress(trial, proc.returncode)
                while pending and len(running) < limit:
                    trial = pending[0]
                    need = trial.spec.budget.gpus
                    if need and len(free_gpus) < need and running:
                        break  # wait for a slot; with nothing running the runner reports the missing GPU
                    pending.popleft()
                    gpus = [free_gpus.popleft() for _ in range(min(need, len(free_gpus)))]
                    env = dict(os.environ, **{BACKEND_ENV: self.name})
                    # Without this, N trials x all-cores thread pools fight over the CPUs.
                    env.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // limit)))
                    if need:
                        env["CUDA_VISIBLE_DEVICES"] = ",".join(gpus)
                    with open(logs / f"{trial.id}.log", "ab") as log:
                        proc = subprocess.Popen(runner_argv(trial), stdout=log, stderr=subprocess.STDOUT, env=env)
                    running[trial.id] = (proc, gpus, trial)
                if tick:
                    tick([t for _, _, t in running.values()])
                time.sleep(self.poll)
        if stop.stopped:
            # Runners checkpoint on SIGTERM and can be resumed with `ptbench run` later.
            for proc, _, _ in running.values():
                proc.send_signal(signal.SIGTERM)
            for tid, (proc, _, _) in running.items():
                proc.wait()
                _drop_if_empty(logs / f"{tid}.log")
            raise KeyboardInterrupt
        return Submitted(job_ids=[], units=len(codes), codes=codes)

    def scheduler_states(self, campaign_dir: Path, trials: list[TrialDir], *, strict: bool = False) -> dict[str, str]:
        return {t.id: "running" for t in trials if runner_alive(t)}

    def cancel(self, campaign_dir: Path, trials: list[TrialDir]) -> list[str]:
        """Mark each trial cancelled and stop its runner; returns the ids that had a live runner."""
        stopped = []
        for trial in trials:
            trial.cancel_marker.touch()
            # Only a runner on this host whose command line names the trial: never a reused pid.
            pid = local_runner_pid(trial)
            if pid is not None:
                try:
                    os.kill(pid, signal.SIGTERM)
                    stopped.append(trial.id)
                except ProcessLookupError:
                    pass
        return stopped

    def render(self, campaign: Campaign, specs: list[TrialSpec], out: str | None) -> str:
        raise UserError("the local backend has no submit file; use --backend slurm or --backend htcondor")

    def log_path(self, campaign_dir: Path, trial: TrialDir) -> Path | None:
        return campaign_dir / "logs" / f"{trial.id}.log"

    # ---- argv units (rollout shards, tool-server replicas) -------------------------------------
    def submit_units(self, array: UnitArray) -> Submitted:
        return units.start(array)

    def prepare_units(self, arrays: list[UnitArray]) -> None:
        return None

    def render_units(self, array: UnitArray, path: Path | None = None) -> Path:
        raise UserError("the local backend has no submit file; use --backend slurm or --backend htcondor")

    def wait_units(self, submitted: Submitted, poll: Any = None) -> dict[str, int]:
        return units.wait(submitted, poll, self.poll)

    def stop_units(self, array: UnitArray, submitted: Submitted) -> None:
        units.stop(submitted)

    def unit_states(self, folder: Path, kind: Kind) -> dict[str, UnitState]:
        return units.states(folder, kind)
