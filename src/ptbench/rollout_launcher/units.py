"""The argv units a rollout submits to a backend besides trials (`backends.base.runner_argv`): a rollout
shard and a tool-server replica, and the line counter that follows shards' output files."""

from __future__ import annotations

import sys
from pathlib import Path

from ptbench.bootcamp.data.datagen import Shard
from ptbench.bootcamp.serving.replicas import IDLE_EXIT_S


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


def replica_command(out: Path, index: int, host: str = "127.0.0.1") -> list[str]:
    return [
        sys.executable,
        "-m",
        "ptbench",
        "bootcamp",
        "serve-tools",
        "--dir",
        str(out),
        "--replica",
        str(index),
        "--host",
        host,
        "--idle-exit",
        f"{IDLE_EXIT_S:g}",
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
