"""A bootcamp rollout's shards as subprocesses here (logs in OUT/shards/<tag>.log)."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from ptbench.backends.units import count_lines, shard_command
from ptbench.bootcamp.datagen import Shard
from ptbench.core.files import atomic_write_json


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
