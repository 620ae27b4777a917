"""Run a rollout's shards on a backend: `local` (subprocesses) or `slurm` (one submitit job array).

Every backend runs the same unit, `python -m ptbench bootcamp rollout-shard OUT --shard i/N`
(`shard_command`), so adding a scheduler only means running N such command lines somewhere that
shares the rollout directory.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

from ptbench.bootcamp.datagen import Shard
from ptbench.core.errors import UserError
from ptbench.core.files import atomic_write_json


def shard_command(out: Path, shard: Shard) -> list[str]:
    return [sys.executable, "-m", "ptbench", "bootcamp", "rollout-shard", str(out), "--shard", f"{shard.index}/{shard.count}"]


def count_lines(paths: list[Path], offsets: dict[Path, tuple[int, int]]) -> int:
    """Lines in all files, reading only what was appended since the last call."""
    total = 0
    for p in paths:
        off, n = offsets.get(p, (0, 0))
        try:
            with open(p, "rb") as fh:
                fh.seek(off)
                chunk = fh.read()
        except FileNotFoundError:
            chunk = b""
        n += chunk.count(b"\n")
        offsets[p] = (off + len(chunk), n)
        total += n
    return total


def run_local(out: Path, shards: int, *, progress: Callable[[int], None] | None = None, poll_s: float = 0.5) -> dict[str, int]:
    """Start every shard as a subprocess (logs in shards/<tag>.log), wait for all; returns exit codes by shard tag."""
    (out / "shards").mkdir(parents=True, exist_ok=True)
    procs: dict[str, subprocess.Popen[bytes]] = {}
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    for i in range(shards):
        shard = Shard(i, shards)
        log = open(out / "shards" / f"{shard.tag}.log", "ab")
        procs[shard.tag] = subprocess.Popen(shard_command(out, shard), stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        log.close()
    atomic_write_json(out / "jobs.json", {"backend": "local", "jobs": {tag: p.pid for tag, p in procs.items()}})
    offsets: dict[Path, tuple[int, int]] = {}
    try:
        while any(p.poll() is None for p in procs.values()):
            if progress is not None:
                progress(count_lines(sorted((out / "shards").glob("shard-*.jsonl")), offsets))
            time.sleep(poll_s)
    except KeyboardInterrupt:
        for p in procs.values():
            if p.poll() is None:
                p.terminate()
        raise
    if progress is not None:
        progress(count_lines(sorted((out / "shards").glob("shard-*.jsonl")), offsets))
    return {tag: p.returncode for tag, p in procs.items()}


def _shard_job(out: str, shard_text: str) -> dict[str, Any]:
    """What a Slurm array task runs (pickled by submitit): the shard, in process."""
    from ptbench.bootcamp.rollout import run_shard

    return run_shard(out, Shard.parse(shard_text))


def run_slurm(out: Path, shards: int, *, slurm: dict[str, Any] | None = None, wait: bool = True, progress: Callable[[int], None] | None = None) -> dict[str, int]:
    """Submit the shards as one Slurm job array through submitit; optionally wait for them."""
    try:
        import submitit
    except ImportError:
        raise UserError("--backend slurm needs submitit (pip install 'ptbench[slurm]')") from None
    params = {"timeout_min": 60, "cpus_per_task": 2, "mem_gb": 4, "slurm_array_parallelism": shards}
    params.update(slurm or {})
    executor = submitit.AutoExecutor(folder=str(out / "slurm" / "%j"), cluster="slurm")
    try:
        executor.update_parameters(name="ptbench-bootcamp", **params)
        jobs = executor.map_array(_shard_job, [str(out)] * shards, [f"{i}/{shards}" for i in range(shards)])
    except Exception as exc:  # sbatch missing, no controller, bad partition: the user's environment
        raise UserError(f"slurm submission failed: {exc} (check `sinfo`, the partition, and --slurm-* options)") from None
    atomic_write_json(out / "jobs.json", {"backend": "slurm", "jobs": {f"shard-{i:05d}-of-{shards:05d}": j.job_id for i, j in enumerate(jobs)}})
    if not wait:
        return {}
    offsets: dict[Path, tuple[int, int]] = {}
    while not all(j.done() for j in jobs):
        if progress is not None:
            progress(count_lines(sorted((out / "shards").glob("shard-*.jsonl")), offsets))
        time.sleep(2.0)
    codes = {}
    for i, j in enumerate(jobs):
        try:
            j.result()
            codes[f"shard-{i:05d}-of-{shards:05d}"] = 0
        except Exception:
            codes[f"shard-{i:05d}-of-{shards:05d}"] = 1
    return codes


def condor_submit_description(out: Path, shards: int, options: dict[str, Any] | None = None) -> str:
    """One cluster of N procs, proc i running shard i/N (templates/htcondor_shards.sub.j2 of the
    htcondor backend; `options` are that backend's options, e.g. accounting_group, container_image)."""
    from ptbench.backends.htcondor_options import parse_options
    from ptbench.backends.htcondor_render import render_shards

    return render_shards(out, shards, parse_options(options), name=out.name)


def run_htcondor(out: Path, shards: int, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write `condor/shards.sub` and submit it (htcondor2 Schedd, else condor_submit); no waiting:
    use `ptbench bootcamp merge OUT` when the cluster finished."""
    from ptbench.backends import htcondor_schedd
    from ptbench.core.files import atomic_write_text

    (out / "condor").mkdir(parents=True, exist_ok=True)
    (out / "shards").mkdir(parents=True, exist_ok=True)
    opts = options or {}
    text = condor_submit_description(out, shards, opts)
    path = out / "condor" / "shards.sub"
    atomic_write_text(path, text)
    cluster, via = htcondor_schedd.submit(path, [], opts.get("submit_with", "auto"))
    atomic_write_json(out / "jobs.json", {"backend": "htcondor", "cluster": cluster, "procs": shards, "via": via, "description": str(path)})
    return {"cluster": cluster}
