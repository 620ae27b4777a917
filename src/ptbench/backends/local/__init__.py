"""The `local` backend: trials, rollout shards and tool-server replicas as subprocesses here."""

from ptbench.backends.local.backend import LocalBackend

__all__ = ["LocalBackend"]
