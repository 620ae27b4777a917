"""A bootcamp rollout's shards on the same backends as trials, with the same `backend.options`.

Every backend runs the same unit, `python -m ptbench bootcamp rollout-shard OUT --shard i/N`
(`shard_command`): `local` as subprocesses, `slurm` as one job array through `SlurmBackend`
(so account, qos, gres, setup and sbatch extras apply as for trials), `htcondor` as one cluster
described with the campaign's HTCondor options (with `--tool-replicas`, after the replicas' cluster,
see htcondor_replicas.py).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ptbench.backends import htcondor_replicas, htcondor_schedd, slurm_cmd
from ptbench.backends.htcondor_options import parse_options
from ptbench.backends.htcondor_render import render_shards
from ptbench.backends.slurm import SlurmBackend
from ptbench.backends.tool_replicas import replica_status_rows
from ptbench.bootcamp.datagen import Shard
from ptbench.core.files import atomic_write_json, atomic_write_text
from ptbench.status import TrialStatus


def shard_command(out: Path, shard: Shard) -> list[str]:
    return [
        sys.executable,
        "-m",
        "ptbench",
        "bootcamp",
        "rollout-shard",
        str(out),
        "--shard",
        f"{shard.index}/{shard.count}",
    ]


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


def run_local(
    out: Path, shards: int, *, progress: Callable[[int], None] | None = None, poll_s: float = 0.5
) -> dict[str, int]:
    """Start every shard as a subprocess (logs in shards/<tag>.log), wait for all; returns exit codes by shard tag."""
    (out / "shards").mkdir(parents=True, exist_ok=True)
    procs: dict[str, subprocess.Popen[bytes]] = {}
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    for i in range(shards):
        shard = Shard(i, shards)
        log = open(out / "shards" / f"{shard.tag}.log", "ab")
        procs[shard.tag] = subprocess.Popen(
            shard_command(out, shard), stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
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
    atomic_write_json(out / "jobs.json", {"backend": "slurm", "jobs": {tag: j.job_id for tag, j in zip(tags, jobs)}})
    if not wait:
        return {}
    offsets: dict[Path, tuple[int, int]] = {}
    while not all(j.done() for j in jobs):
        if progress is not None:
            progress(count_lines(sorted((out / "shards").glob("shard-*.jsonl")), offsets))
        time.sleep(2.0)
    codes = {}
    for tag, j in zip(tags, jobs):
        try:
            j.result()
            codes[tag] = 0
        except Exception:
            codes[tag] = 1
    return codes


def condor_submit_description(out: Path, shards: int, options: dict[str, Any] | None = None) -> str:
    """One cluster of N procs, proc i running shard i/N (templates/htcondor_shards.sub.j2 of the
    htcondor backend; `options` are that backend's options, e.g. accounting_group, container_image)."""
    return render_shards(out, shards, parse_options(options or {}), name=out.name)


def run_htcondor(
    out: Path, shards: int, options: dict[str, Any] | None = None, *, tool_replicas: int | None = None
) -> dict[str, Any]:
    """Write `condor/shards.sub` and submit it (htcondor2 Schedd, else condor_submit), after the
    `tool_replicas` cluster if asked (its token written first); no waiting: use `ptbench bootcamp
    merge OUT` when the cluster finished (the replicas leave by themselves)."""
    (out / "condor").mkdir(parents=True, exist_ok=True)
    (out / "shards").mkdir(parents=True, exist_ok=True)
    opts = options or {}
    text = condor_submit_description(out, shards, opts)
    if tool_replicas:
        htcondor_replicas.description(
            out, tool_replicas, shards, opts
        )  # both descriptions valid before either is submitted
    path = out / "condor" / "shards.sub"
    atomic_write_text(path, text)
    res: dict[str, Any] = {}
    if tool_replicas:
        res["tool_cluster"] = htcondor_replicas.submit(out, tool_replicas, shards, opts)
    try:
        cluster, via = htcondor_schedd.submit(path, [], opts.get("submit_with", "auto"))
    except BaseException:
        if tool_replicas:
            warning = htcondor_replicas.cancel(out, res["tool_cluster"], tool_replicas)
            if warning:
                print(f"warning: {warning}", file=sys.stderr)
        raise
    atomic_write_json(
        out / "jobs.json",
        {"backend": "htcondor", "cluster": cluster, "procs": shards, "via": via, "description": str(path)},
    )
    return {**res, "cluster": cluster}


def shard_status_rows(out: Path) -> list[TrialStatus]:
    """One row per shard, like a trial's in `ptbench status`: done / running / queued / pending from
    the shard's files and (Slurm) one squeue call; episodes recorded so far; the job id."""
    import json

    settings = json.loads((out / "rollout.json").read_text())
    jobs_file = out / "jobs.json"
    jobs = json.loads(jobs_file.read_text()) if jobs_file.exists() else {}
    by_tag: dict[str, Any] = jobs.get("jobs", {})
    tags = [re.match(r"shard-\d+-of-(\d+)", p.name) for p in (out / "shards").glob("shard-*.jsonl")]
    count = len(by_tag) or max((int(m.group(1)) for m in tags if m), default=1)
    live: dict[str, str] = {}
    if jobs.get("backend") == "slurm" and by_tag:
        try:
            infos = slurm_cmd.squeue(sorted({str(j).split("_")[0] for j in by_tag.values()}))
        except slurm_cmd.SlurmUnavailable:
            infos = {}
        live = {
            tag: state
            for tag, j in by_tag.items()
            if (info := infos.get(str(j))) and (state := slurm_cmd.trial_state(info.state))
        }
    rows = []
    for i in range(count):
        shard = Shard(i, count)
        done = out / "shards" / f"{shard.tag}.done.json"
        lines = count_lines([out / "shards" / f"{shard.tag}.jsonl"], {})
        if done.exists():
            counts = json.loads(done.read_text())
            state = "completed" if not counts.get("error") else "failed"  # failed episodes are redone by a rerun
            detail = ", ".join(f"{k} {v}" for k, v in counts.items() if k in ("ok", "error", "retries"))
        else:
            state = live.get(shard.tag) or (
                "running"
                if jobs.get("backend") == "local" and _local_alive(by_tag.get(shard.tag))
                else "pending"
                if not lines
                else "interrupted"
            )
            detail = ""
        rows.append(
            TrialStatus(
                trial_id=shard.tag,
                state=state,
                metric=f"{lines} episodes",
                detail=detail,
                job_id=str(by_tag[shard.tag]) if shard.tag in by_tag else None,
                stage=settings.get("split"),
            )
        )
    return rows + replica_status_rows(out)


def _local_alive(pid: Any) -> bool:
    import psutil

    try:
        return pid is not None and psutil.pid_exists(int(pid))
    except (TypeError, ValueError):
        return False
