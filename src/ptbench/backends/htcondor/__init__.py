"""The `htcondor` backend: one cluster per submission (trials, rollout shards, tool-server replicas)."""

from ptbench.backends.htcondor.backend import HTCondorBackend

__all__ = ["HTCondorBackend"]
