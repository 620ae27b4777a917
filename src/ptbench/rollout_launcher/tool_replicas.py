"""A rollout's tool-server replicas on the backend that runs its shards, for as long as the rollout runs,
and their rows in `ptbench status`.

`tool_replicas(out, n, backend, options, minutes)` is a context manager: it starts a new replica run
(fresh token, see bootcamp/serving/replicas.py), submits replica i as `ptbench bootcamp serve-tools --dir
OUT --replica i` through the backend's `submit_units` (local: subprocesses; Slurm: one job array
with the same `backend.options` as trials and shards), and on the way out (finished, failed or
interrupted) writes `tool-servers/done`, which every replica obeys, then stops what is left
(`stop_units`: terminate/kill, or one `scancel`) and waits until none runs. HTCondor, where nobody
waits, is handled by the rollout launcher (rollout_launcher/launch.py). The scheduler places and restarts
replicas; nothing here manages them beyond that.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ptbench.backends.jobs import JobsFile
from ptbench.backends.registry import get_backend
from ptbench.bootcamp.serving import replicas
from ptbench.core.errors import UserError
from ptbench.rollout_launcher.launch import replica_array
from ptbench.status import TrialStatus


@contextmanager
def tool_replicas(
    out: Path, n: int, backend: str, options: dict[str, Any] | None = None, *, minutes: int = 60
) -> Iterator[dict[str, str]]:
    """Run `n` replicas while the block runs; yields replica index -> pid or Slurm job id."""
    chosen = get_backend(backend, options)
    if not chosen.waits:
        raise UserError(
            f"--tool-replicas: the {backend} backend has no waiting rollout to stop replicas; use local or slurm here "
            "(HTCondor: `ptbench bootcamp rollout --tool-replicas N`, rollout_launcher/launch.py)"
        )
    array = replica_array(out, n, 0, minutes, "127.0.0.1" if chosen.runs_here else "0.0.0.0")
    replicas.new_run(out)
    submitted = chosen.submit_units(array)
    table = JobsFile.load(array.folder, "tool-servers")
    try:
        yield dict(table.units) if table else {}
    finally:
        replicas.mark_done(out)
        chosen.stop_units(array, submitted)


def replica_status_rows(out: Path) -> list[TrialStatus]:
    """One `ptbench status` row per tool-server replica of the rollout's latest run (none without one)."""
    folder = replicas.replica_dir(out)
    table = JobsFile.load(folder, "tool-servers")
    if table is None:
        return []
    announced = {}
    for path in folder.glob("replica-*.json"):
        try:
            info = json.loads(path.read_text())
            announced[str(info["replica"])] = info
        except (FileNotFoundError, ValueError, KeyError):
            continue
    backend = get_backend(table.backend)
    live = backend.unit_states(folder, "tool-servers")
    rows = []
    for index, job in sorted(table.units.items(), key=lambda kv: int(kv[0])):
        seen = live.get(index)
        if backend.runs_here:  # a live process here that has not announced itself yet is not serving
            state = "running" if seen and seen.state == "running" and index in announced else "ended"
        else:
            state = seen.state if seen else "unknown"
        rows.append(
            TrialStatus(
                trial_id=f"tool-replica-{index}",
                state=state,
                metric=announced.get(index, {}).get("url", ""),
                detail=seen.raw if seen and not backend.runs_here else "",
                job_id=job,
                stage="tools",
            )
        )
    return rows
