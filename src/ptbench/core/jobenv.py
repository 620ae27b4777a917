"""What a job's environment says about it: which scheduler and job, whether a stop signal means
the job's time limit, and the marker every process of a trial inherits.

Backends' job wrappers set these variables; the runner, the agent launcher and the result
writer read them. Which scheduler and job is asked of the backends themselves: each registered
backend registers its reader here (backends/registry.py), so this lowest layer names none of them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping

# Every process a trial starts inherits this variable (the trial directory): a restarted runner
# finds the leftovers of a runner killed with -9 by it.
TRIAL_ENV_MARKER = "PTBENCH_TRIAL_DIR"


# The variables every backend's job wrapper sets for the processes it starts (local: subprocess env,
# Slurm: the pickled job, HTCondor: the submit description's `environment`).
BACKEND_ENV = "PTBENCH_BACKEND"
JOB_ID_ENV = "PTBENCH_JOB_ID"

JobReader = Callable[[Mapping[str, str]], "str | None"]
"""A backend's job identity: this environment's job id, as its scheduler names it, or None when the
environment is not one of its jobs."""
_READERS: dict[str, JobReader] = {}


def register_job_reader(backend: str, reader: JobReader) -> None:
    """Called for each registered backend (backends/registry.py): `job_identity` asks it."""
    _READERS[backend] = reader


def job_identity(environ: Mapping[str, str] | None = None) -> tuple[str, str | None]:
    """(scheduler, job id) of the job this process runs in.

    The backend named by $PTBENCH_BACKEND (its wrapper set it) answers for its own job; without
    it (a process started by hand inside a job) the first backend that recognises the environment
    does; else the local machine. A named backend whose reader is not loaded falls back on
    $PTBENCH_JOB_ID, which every wrapper sets too.
    """
    env = os.environ if environ is None else environ
    named = env.get(BACKEND_ENV)
    if named:
        reader = _READERS.get(named)
        return named, (reader(env) if reader is not None else None) or env.get(JOB_ID_ENV)
    for backend, reader in _READERS.items():
        job = reader(env)
        if job:
            return backend, job
    return "local", env.get(JOB_ID_ENV)


TIME_LIMIT_ENV = "PTBENCH_TIME_LIMIT_AT"
LIMIT_SIGNAL_ENV = "PTBENCH_TIME_LIMIT_SIGNAL"


def scheduler_time_limit_reached(signame: str) -> bool:
    """Does this stop signal mean the job's hard wall-clock limit (not a preemption or requeue)?

    A backend's job wrapper says so through the environment: $PTBENCH_TIME_LIMIT_SIGNAL names the
    signal the scheduler sends only before the limit (Slurm `--signal`), and $PTBENCH_TIME_LIMIT_AT
    (epoch seconds) is the moment after which any stop signal means the limit.
    """
    if signame and signame == os.environ.get(LIMIT_SIGNAL_ENV):
        return True
    try:
        return time.time() >= float(os.environ[TIME_LIMIT_ENV])
    except (KeyError, ValueError):
        return False
