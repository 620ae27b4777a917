"""A rollout's tool-server replicas and shards as HTCondor descriptions, for a reader (tests,
benchmarks, `--render`): what the launcher (rollout_launcher/launch.py) submits through `HTCondorBackend`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ptbench.backends.htcondor import units
from ptbench.backends.htcondor.options import parse_options
from ptbench.rollout_launcher.launch import replica_array, shard_array


def render(out: Path, n: int, shards: int, options: dict[str, Any] | None = None) -> Path:
    """Write `OUT/condor/tool-servers.sub` (what a rollout with `--tool-replicas n` submits); return its path."""
    array = replica_array(out, n, shards, 60, "0.0.0.0")
    return units.render(parse_options(options or {}), array, units.default_path(array))


def shards_description(out: Path, shards: int, options: dict[str, Any] | None = None) -> str:
    """One cluster of N procs, proc i running shard i/N (templates/htcondor_shards.sub.j2; `options`
    are the backend's options, e.g. accounting_group, container_image)."""
    return units.description(parse_options(options or {}), shard_array(out, shards, 60))
