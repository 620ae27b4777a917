"""A rollout's tool-server replicas on the backend that runs its shards, for as long as the rollout runs.

`tool_replicas(out, n, backend, options, minutes)` is a context manager: it starts a new replica run
(fresh token, see bootcamp/replicas.py), submits replica i as `ptbench bootcamp serve-tools --dir
OUT --replica i` — `local`: subprocesses (local/replicas.py); `slurm`: one job array through
`SlurmBackend` (slurm/replicas.py), with the same `backend.options` as trials and shards — and on
the way out (finished, failed or interrupted) writes `tool-servers/done`, which every replica obeys,
then cancels what is left (terminate/kill, or one `scancel`) and waits until none runs. HTCondor,
where nobody waits: htcondor/replicas.py. The scheduler places and restarts replicas; nothing here
manages them beyond that.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil

from ptbench.backends.htcondor import schedd as htcondor_schedd
from ptbench.backends.local.replicas import start_local, stop_local
from ptbench.backends.slurm import cmd as slurm_cmd
from ptbench.backends.slurm.replicas import start_slurm, stop_slurm
from ptbench.bootcamp import replicas
from ptbench.core.errors import UserError
from ptbench.core.files import atomic_write_json
from ptbench.status import TrialStatus


@contextmanager
def tool_replicas(
    out: Path, n: int, backend: str, options: dict[str, Any] | None = None, *, minutes: int = 60
) -> Iterator[dict[str, str]]:
    """Run `n` replicas while the block runs; yields replica index -> pid or Slurm job id."""
    if backend not in ("local", "slurm"):
        raise UserError(
            f"--tool-replicas: the {backend} backend has no waiting rollout to stop replicas; use local or slurm here "
            "(HTCondor: backends/htcondor/replicas.py)"
        )
    replicas.new_run(out)
    if backend == "local":
        procs = start_local(out, n)
        jobs = {str(i): str(p.pid) for i, p in enumerate(procs)}
    else:
        jobs = start_slurm(out, n, options, minutes)
    atomic_write_json(replicas.replica_dir(out) / "jobs.json", {"backend": backend, "jobs": jobs})
    try:
        yield jobs
    finally:
        replicas.mark_done(out)
        if backend == "local":
            stop_local(procs)
        else:
            stop_slurm(list(jobs.values()))


def replica_status_rows(out: Path) -> list[TrialStatus]:
    """One `ptbench status` row per tool-server replica of the rollout's latest run (none without one)."""
    listing = replicas.replica_dir(out) / "jobs.json"
    if not listing.exists():
        return []
    jobs = json.loads(listing.read_text())
    announced = {}
    for path in replicas.replica_dir(out).glob("replica-*.json"):
        try:
            info = json.loads(path.read_text())
            announced[str(info["replica"])] = info
        except (FileNotFoundError, ValueError, KeyError):
            continue
    live: dict[str, str] = {}
    if jobs.get("backend") == "slurm":
        try:
            live = {
                j: info.state
                for j, info in slurm_cmd.squeue(sorted({str(j).split("_")[0] for j in jobs["jobs"].values()})).items()
            }
        except slurm_cmd.SlurmUnavailable:
            pass
    elif jobs.get("backend") == "htcondor":
        live = {j: entry.status for j, entry in htcondor_schedd.query([int(jobs["cluster"])]).items()}
    rows = []
    for index, job in sorted(jobs["jobs"].items(), key=lambda kv: int(kv[0])):
        if jobs.get("backend") == "htcondor":
            raw = live.get(str(job), "")
            state = raw if raw in ("queued", "running", "held") else ("ended" if raw else "unknown")
        elif jobs.get("backend") == "slurm":
            raw = live.get(str(job), "")
            state = slurm_cmd.trial_state(raw) or ("ended" if raw else "unknown")
        else:
            state = "running" if psutil.pid_exists(int(job)) and index in announced else "ended"
        url = announced.get(index, {}).get("url", "")
        rows.append(
            TrialStatus(
                trial_id=f"tool-replica-{index}",
                state=state,
                metric=url,
                detail=live.get(str(job), ""),
                job_id=str(job),
                stage="tools",
            )
        )
    return rows
