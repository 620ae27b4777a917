"""A bootcamp rollout's shards on the same backends as trials, with the same `backend.options`.

Every backend runs the same unit, `python -m ptbench bootcamp rollout-shard OUT --shard i/N`
(`units.shard_command`): `local` as subprocesses (local/shards.py), `slurm` as one job array
through `SlurmBackend` (slurm/shards.py: account, qos, gres, setup and sbatch extras apply as for
trials), `htcondor` as one cluster described with the campaign's HTCondor options (htcondor/shards.py;
with `--tool-replicas`, after the replicas' cluster, see htcondor/replicas.py). Here: the shards'
rows in `ptbench status`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ptbench.backends.slurm import cmd as slurm_cmd
from ptbench.backends.tool_replicas import replica_status_rows
from ptbench.backends.units import count_lines
from ptbench.bootcamp.datagen import Shard
from ptbench.status import TrialStatus


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
