"""Argv units (rollout shards, tool-server replicas) as Slurm job arrays through `SlurmBackend`, with
the campaign's `backend.options` (account, qos, gres, setup, sbatch extras) as for trials, split to
fit the controller's limits; all or nothing. Array task i runs unit i's argv (a pickled `ArgvJob`)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ptbench.backends.base import Submitted, UnitArray, UnitState
from ptbench.backends.jobs import JobsFile, Kind, write_jobs
from ptbench.backends.slurm import cmd as slurm_cmd

if TYPE_CHECKING:
    from ptbench.backends.slurm.backend import SlurmBackend


class ArgvJob:
    """Picklable callable: `ArgvJob()(argv)` runs one unit's argv on the node, output to the task's log."""

    def __call__(self, argv: list[str]) -> int:
        rc = subprocess.run(argv, env=dict(os.environ, PYTHONUNBUFFERED="1")).returncode
        if rc != 0:
            raise RuntimeError(f"`{' '.join(argv[1:])}` exited {rc}")
        return rc


def parameters(backend: SlurmBackend, array: UnitArray) -> dict[str, Any]:
    return backend.array_parameters(
        name=array.name,
        minutes=array.minutes,
        parallelism=array.parallelism or len(array.units),
        gres=None,
        what_runs=array.what_runs,
    )


def render(backend: SlurmBackend, array: UnitArray, path: Path | None) -> Path:
    """The sbatch script of the (first) array `submit` would hand to Slurm."""
    path = path or Path(array.extra["out"]) / "submit" / str(array.extra.get("render_as", f"{array.kind}.sh"))
    sizes = backend.array_sizes(len(array.units))
    backend.render_array(parameters(backend, array), array.folder / "slurm", sizes[0] if sizes else 0, path)
    return path


def submit(backend: SlurmBackend, array: UnitArray) -> Submitted:
    # the nodes' python (backend.options.python) runs what this one would
    argvs = [[backend.python, *u.argv[1:]] if u.argv[0] == sys.executable else u.argv for u in array.units]
    jobs, _ = backend.submit_arrays(array.folder / "slurm", ArgvJob(), [argvs], parameters(backend, array))
    ids = {u.id: j.job_id for u, j in zip(array.units, jobs, strict=True)}
    arrays = sorted({j.split("_")[0] for j in ids.values()})
    write_jobs(array.folder, "slurm", array.kind, arrays[0], ids, folder=str(array.folder / "slurm"))
    return Submitted(job_ids=arrays, units=len(ids), handles=dict(zip(ids, jobs, strict=True)), noun="job")


def wait(submitted: Submitted, poll: Callable[[], None] | None, poll_s: float = 2.0) -> dict[str, int]:
    jobs: dict[str, Any] = submitted.handles
    while not all(j.done() for j in jobs.values()):
        if poll is not None:
            poll()
        time.sleep(poll_s)
    if poll is not None:
        poll()
    codes = {}
    for unit, j in jobs.items():
        try:
            j.result()
            codes[unit] = 0
        except Exception:
            codes[unit] = 1
    return codes


def stop(submitted: Submitted, grace_s: float = 5.0, wait_s: float = 120.0) -> None:
    """One scancel for the tasks still queued or running (after `grace_s` to leave by themselves),
    then wait until Slurm says none runs."""
    array = list(submitted.job_ids)
    deadline = time.monotonic() + wait_s
    cancelled = False
    while time.monotonic() < deadline:
        try:
            live = [j for j, info in slurm_cmd.squeue(array).items() if info.state not in slurm_cmd.ENDED]
        except slurm_cmd.SlurmUnavailable as exc:
            where = ",".join(array)
            print(
                f"warning: cannot tell whether jobs {where} ended ({exc}); check `squeue -j {where}`", file=sys.stderr
            )
            return
        if not live:
            return
        if not cancelled and time.monotonic() > deadline - wait_s + grace_s:
            slurm_cmd.scancel(array)
            cancelled = True
        time.sleep(1.0)
    print(f"warning: jobs {', '.join(array)} still listed by squeue after {wait_s:g} s", file=sys.stderr)


def states(folder: Path, kind: Kind) -> dict[str, UnitState]:
    """Each unit's job state in one squeue call (Slurm's word kept in `raw`); {} when squeue cannot answer."""
    table = JobsFile.load(folder, kind)
    if table is None or not table.units:
        return {}
    try:
        infos = slurm_cmd.squeue(sorted({j.split("_")[0] for j in table.units.values()}))
    except slurm_cmd.SlurmUnavailable:
        return {}
    out = {}
    for unit, job in table.units.items():
        if job in infos:
            raw = infos[job].state
            out[unit] = UnitState(slurm_cmd.trial_state(raw) or "ended", raw)
    return out
