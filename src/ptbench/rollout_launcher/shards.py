"""A bootcamp rollout's shards in `ptbench status`: one row per shard, like a trial's.

Every backend runs the same unit, `python -m ptbench bootcamp rollout-shard OUT --shard i/N`
(`units.shard_command`), submitted by the rollout launcher (rollout_launcher/launch.py) through the
backend's `submit_units`: local subprocesses, a Slurm job array with the campaign's
`backend.options`, or one HTCondor cluster described with its HTCondor options.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ptbench.backends.jobs import JobsFile
from ptbench.backends.registry import get_backend
from ptbench.bootcamp.data.datagen import Shard
from ptbench.core.errors import UserError
from ptbench.rollout_launcher.tool_replicas import replica_status_rows
from ptbench.rollout_launcher.units import count_lines
from ptbench.status import TrialStatus


def shard_status_rows(out: Path) -> list[TrialStatus]:
    """One row per shard, like a trial's in `ptbench status`: done / running / queued / pending from
    the shard's files and the backend's `unit_states` (one scheduler call); episodes recorded so
    far; the job id."""
    settings = json.loads((out / "rollout.json").read_text())
    table = JobsFile.load(out, "shards")
    by_tag = dict(table.units) if table else {}
    tags = [re.match(r"shard-\d+-of-(\d+)", p.name) for p in (out / "shards").glob("shard-*.jsonl")]
    count = len(by_tag) or max((int(m.group(1)) for m in tags if m), default=1)
    live: dict[str, str] = {}
    if table is not None and by_tag:
        try:
            seen = get_backend(table.backend).unit_states(out, "shards")
        except UserError:  # the scheduler cannot answer: the shards' files still say a lot
            seen = {}
        live = {tag: s.state for tag, s in seen.items() if s.state != "ended"}
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
            state = live.get(shard.tag) or ("pending" if not lines else "interrupted")
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
