"""Backends: where trials run. `local` (subprocesses here), `slurm`, `htcondor`.

Each backend submits runner commands (`ptbench trial run DIR`), reports scheduler states, cancels,
and says where logs are; it never decides what a trial's result is — the runner does.
"""

from ptbench.backends.base import Backend
from ptbench.backends.registry import get_backend

__all__ = ["Backend", "get_backend"]
