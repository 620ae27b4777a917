"""A bootcamp rollout's shards as one Slurm job array through `SlurmBackend`, so account, qos,
gres, setup and sbatch extras apply as for trials."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ptbench.backends.slurm.backend import SlurmBackend
from ptbench.backends.units import count_lines
from ptbench.bootcamp.datagen import Shard
from ptbench.core.files import atomic_write_json


def _shard_job(out: str, shard_text: str) -> dict[str, Any]:
    """What a Slurm array task runs (pickled by submitit): the shard, in process."""
    from ptbench.bootcamp.rollout import run_shard

    return run_shard(out, Shard.parse(shard_text))


def slurm_parameters(
    out: Path, shards: int, options: dict[str, Any] | None, minutes: int
) -> tuple[SlurmBackend, dict[str, Any]]:
    backend = SlurmBackend(**(options or {}))
    what_runs = f"# array task i runs `ptbench bootcamp rollout-shard {out} --shard i/{shards}`"
    params = backend.array_parameters(
        name=f"ptbench-bootcamp-{out.name}", minutes=minutes, parallelism=shards, gres=None, what_runs=what_runs
    )
    return backend, params


def render_slurm(
    out: Path, shards: int, options: dict[str, Any] | None = None, *, minutes: int = 60, path: Path | None = None
) -> Path:
    """The sbatch script `run_slurm` would submit, without submitting."""
    backend, params = slurm_parameters(out, shards, options, minutes)
    path = path or out / "submit" / "slurm.sh"
    backend.render_array(params, out / "slurm", shards, path)
    return path


def run_slurm(
    out: Path,
    shards: int,
    options: dict[str, Any] | None = None,
    *,
    minutes: int = 60,
    wait: bool = True,
    progress: Callable[[int], None] | None = None,
) -> dict[str, int]:
    """Submit the shards as one Slurm job array; optionally wait for them."""
    backend, params = slurm_parameters(out, shards, options, minutes)
    jobs = backend.submit_array(
        out / "slurm", _shard_job, [[str(out)] * shards, [f"{i}/{shards}" for i in range(shards)]], params
    )
    tags = [Shard(i, shards).tag for i in range(shards)]
    atomic_write_json(
        out / "jobs.json", {"backend": "slurm", "jobs": {tag: j.job_id for tag, j in zip(tags, jobs, strict=True)}}
    )
    if not wait:
        return {}
    offsets: dict[Path, tuple[int, int]] = {}
    while not all(j.done() for j in jobs):
        if progress is not None:
            progress(count_lines(sorted((out / "shards").glob("shard-*.jsonl")), offsets))
        time.sleep(2.0)
    codes = {}
    for tag, j in zip(tags, jobs, strict=True):
        try:
            j.result()
            codes[tag] = 0
        except Exception:
            codes[tag] = 1
    return codes
