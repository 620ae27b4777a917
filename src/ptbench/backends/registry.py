"""Where a backend is chosen by name: the one factory. Implementations load lazily: a local run
should not import the scheduler bindings."""

from __future__ import annotations

from ptbench.backends.base import Backend
from ptbench.core.errors import UserError

NAMES = ("local", "slurm", "htcondor")


def get_backend(name: str, options: dict | None = None) -> Backend:
    options = options or {}
    if name == "local":
        from ptbench.backends.local import LocalBackend

        return LocalBackend(**options)
    if name == "slurm":
        from ptbench.backends.slurm import SlurmBackend

        return SlurmBackend(**options)
    if name == "htcondor":
        from ptbench.backends.htcondor import HTCondorBackend

        return HTCondorBackend(**options)
    raise UserError(f"unknown backend '{name}' (use local, slurm or htcondor)")
