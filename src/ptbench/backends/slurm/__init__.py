"""The `slurm` backend: job arrays through submitit (trials, rollout shards, tool-server replicas)."""

from ptbench.backends.slurm.backend import SlurmBackend

__all__ = ["SlurmBackend"]
