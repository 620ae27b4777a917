"""What a job's environment says about it: which scheduler and job, whether a stop signal means
the job's time limit, and the marker every process of a trial inherits.

Backends' job wrappers set these variables; the runner, the agent launcher and the result
writer read them. Nothing here imports another ptbench module.
"""

from __future__ import annotations

import os
import time

# Every process a trial starts inherits this variable (the trial directory): a restarted runner
# finds the leftovers of a runner killed with -9 by it.
TRIAL_ENV_MARKER = "PTBENCH_TRIAL_DIR"


def job_identity() -> tuple[str, str | None]:
    """(scheduler, job id) of the job this runner runs in."""
    if os.environ.get("SLURM_JOB_ID"):
        array = os.environ.get("SLURM_ARRAY_JOB_ID")
        task = os.environ.get("SLURM_ARRAY_TASK_ID")
        return "slurm", f"{array}_{task}" if array and task else os.environ["SLURM_JOB_ID"]
    if os.environ.get("_CONDOR_JOB_AD") or os.environ.get("PTBENCH_BACKEND") == "htcondor":
        return "htcondor", os.environ.get("PTBENCH_JOB_ID")
    return os.environ.get("PTBENCH_BACKEND", "local"), os.environ.get("PTBENCH_JOB_ID")


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
