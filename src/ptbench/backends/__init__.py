"""Backends: where trials, rollout shards and tool-server replicas run. Packages `local/`
(subprocesses here), `slurm/`, `htcondor/`; docs/backends.md has the map.

Each backend submits arrays of argv units (`ptbench trial run DIR`, `ptbench bootcamp rollout-shard`,
`ptbench bootcamp serve-tools`) within the scheduler's limits, records them in `jobs.json`
(jobs.py), reports scheduler states, cancels, and says where logs are; it never decides what a
trial's result is — the runner does.
"""

from ptbench.backends.base import Backend
from ptbench.backends.registry import get_backend

__all__ = ["Backend", "get_backend"]
