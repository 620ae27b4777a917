"""A rollout's tool-server replicas as one Slurm job array, with the same `backend.options` as
trials and shards; stopped with one `scancel` once they had a moment to obey `done`."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from ptbench.backends.slurm import cmd as slurm_cmd
from ptbench.backends.slurm.backend import SlurmBackend
from ptbench.backends.units import IDLE_EXIT_S
from ptbench.bootcamp import replicas


def _replica_job(out: str, index: int) -> None:
    """What a Slurm array task runs (pickled by submitit): replica `index`, in process, on every interface."""
    from ptbench.bootcamp.toolserver import serve

    serve(out, host="0.0.0.0", replica=index, idle_exit_s=IDLE_EXIT_S)


def slurm_parameters(
    out: Path, n: int, options: dict[str, Any] | None, minutes: int
) -> tuple[SlurmBackend, dict[str, Any]]:
    backend = SlurmBackend(**(options or {}))
    what_runs = (
        f"# array task i runs `ptbench bootcamp serve-tools --dir {out} --replica i`"
        " (tool server for the rollout's shards)"
    )
    params = backend.array_parameters(
        name=f"ptbench-tools-{out.name}", minutes=minutes, parallelism=n, gres=None, what_runs=what_runs
    )
    return backend, params


def render_slurm(out: Path, n: int, options: dict[str, Any] | None = None, *, minutes: int = 60) -> Path:
    """The sbatch script `tool_replicas` would submit for the replicas, without submitting."""
    backend, params = slurm_parameters(out, n, options, minutes)
    path = out / "submit" / "tool-servers.sh"
    backend.render_array(params, replicas.replica_dir(out) / "slurm", n, path)
    return path


def start_slurm(out: Path, n: int, options: dict[str, Any] | None, minutes: int) -> dict[str, str]:
    backend, params = slurm_parameters(out, n, options, minutes)
    submitted = backend.submit_array(
        replicas.replica_dir(out) / "slurm", _replica_job, [[str(out)] * n, list(range(n))], params
    )
    return {str(i): j.job_id for i, j in enumerate(submitted)}


def stop_slurm(job_ids: list[str], wait_s: float = 120.0) -> None:
    """One scancel for the tasks still queued or running, then wait until Slurm says none runs."""
    array = sorted({j.split("_")[0] for j in job_ids})
    deadline = time.monotonic() + wait_s
    cancelled = False
    while time.monotonic() < deadline:
        try:
            live = [j for j, info in slurm_cmd.squeue(array).items() if info.state not in slurm_cmd.ENDED]
        except slurm_cmd.SlurmUnavailable as exc:
            where = ",".join(array)
            print(
                f"warning: cannot tell whether the tool-server replicas ended ({exc}); check `squeue -j {where}`",
                file=sys.stderr,
            )
            return
        if not live:
            return
        if not cancelled and time.monotonic() > deadline - wait_s + 5:  # they had 5 s to obey `done`
            slurm_cmd.scancel(array)
            cancelled = True
        time.sleep(1.0)
    print(
        f"warning: tool-server replicas {', '.join(array)} still listed by squeue after {wait_s:g} s", file=sys.stderr
    )
