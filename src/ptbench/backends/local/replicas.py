"""A rollout's tool-server replicas as subprocesses here, each dying with the rollout process."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import time
from pathlib import Path

from ptbench.backends.units import replica_command
from ptbench.bootcamp import replicas

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the replica, before exec: SIGTERM when the rollout process dies, even SIGKILLed (Linux)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover (not Linux): the idle exit still ends it
        pass


def start_local(out: Path, n: int) -> list[subprocess.Popen[bytes]]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    procs = []
    for i in range(n):
        with open(replicas.replica_dir(out) / f"replica-{i}.log", "ab") as log:
            procs.append(
                subprocess.Popen(
                    replica_command(out, i),
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=env,
                    start_new_session=True,
                    preexec_fn=_die_with_parent,
                )
            )
    return procs


def stop_local(procs: list[subprocess.Popen[bytes]], grace_s: float = 5.0) -> None:
    """The replicas saw `done`; give them `grace_s` to leave, then SIGTERM (with SIGCONT, for a
    stopped one, as Slurm does), then SIGKILL their whole session."""
    deadline = time.monotonic() + grace_s
    for sigs in ((), (signal.SIGTERM, signal.SIGCONT), (signal.SIGKILL,)):
        for p in procs:
            for sig in sigs:
                if p.poll() is None:
                    try:
                        os.killpg(p.pid, sig)  # the replica and anything it started (heavy-tool workers)
                    except ProcessLookupError:
                        pass
        while any(p.poll() is None for p in procs) and time.monotonic() < deadline:
            time.sleep(0.1)
        deadline = time.monotonic() + 5.0
    for p in procs:
        p.wait()
