"""Argv units (rollout shards, tool-server replicas) as subprocesses here, each in its own session
(so a stop reaches whatever it started), logging to the unit's log file; tool-server replicas also
die with the rollout process, even a SIGKILLed one (Linux). Their pids go in the folder's jobs.json."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import psutil

from ptbench.backends.base import Submitted, UnitArray, UnitState
from ptbench.backends.jobs import JobsFile, Kind, write_jobs
from ptbench.core.prctl import set_parent_death_signal
from ptbench.core.procgroup import stop_groups


def _die_with_parent() -> None:
    """In the unit, before exec: SIGTERM when the process that started it dies, even SIGKILLed (Linux;
    elsewhere a replica's idle exit still ends it)."""
    set_parent_death_signal(signal.SIGTERM)


def start(array: UnitArray) -> Submitted:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    procs: dict[str, subprocess.Popen[bytes]] = {}
    for unit in array.units:
        log_path = unit.log or array.folder / f"{unit.id}.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(log_path, "ab") as log:
            procs[unit.id] = subprocess.Popen(
                unit.argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
                preexec_fn=_die_with_parent if array.kind == "tool-servers" else None,
            )
    write_jobs(array.folder, "local", array.kind, "local", {u: str(p.pid) for u, p in procs.items()})
    return Submitted(job_ids=[], units=len(procs), handles=procs)


def wait(submitted: Submitted, poll: Callable[[], None] | None, poll_s: float) -> dict[str, int]:
    """Wait for every unit; Ctrl-C terminates the ones still running."""
    procs: dict[str, subprocess.Popen[bytes]] = submitted.handles
    try:
        while any(p.poll() is None for p in procs.values()):
            if poll is not None:
                poll()
            time.sleep(poll_s)
    except KeyboardInterrupt:
        for p in procs.values():
            if p.poll() is None:
                p.terminate()
        raise
    if poll is not None:
        poll()
    return {u: p.returncode for u, p in procs.items()}


def stop(submitted: Submitted, grace_s: float = 5.0) -> None:
    """The units were told to leave (a replica obeys `done`); give them `grace_s`, then SIGTERM (with
    SIGCONT, for a stopped one, as Slurm does), then SIGKILL their whole session."""
    procs = list(submitted.handles.values())
    deadline = time.monotonic() + grace_s
    while any(p.poll() is None for p in procs) and time.monotonic() < deadline:
        time.sleep(0.1)
    stop_groups(procs, grace_s=5.0)  # the units and anything they started (heavy-tool workers)


def states(folder: Path, kind: Kind) -> dict[str, UnitState]:
    """running for a unit whose process lives, ended otherwise."""
    table = JobsFile.load(folder, kind)
    if table is None:
        return {}
    return {u: UnitState("running" if _alive(pid) else "ended", pid) for u, pid in table.units.items()}


def _alive(pid: str) -> bool:
    try:
        return psutil.pid_exists(int(pid))
    except (TypeError, ValueError):
        return False
