"""The one place where ptbench calls Slurm's command-line tools (squeue, sacct, scancel).

sbatch is called by submitit (through `SlurmExecutor`); its refusals are turned into one line
here too (`sbatch_refusal`).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass

from ptbench.core.errors import UserError

# Slurm job states -> what a trial is doing, as far as the scheduler knows. Ended jobs are not
# mapped: once a job has ended, the trial's own files (state.json, result.json) are the truth.
_QUEUED = {"PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD", "RESV_DEL_HOLD", "SPECIAL_EXIT"}
_RUNNING = {"RUNNING", "COMPLETING", "SIGNALING", "STAGE_OUT", "RESIZING"}
_SUSPENDED = {"SUSPENDED", "STOPPED"}
ENDED = {
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "TIMEOUT",
    "NODE_FAIL",
    "PREEMPTED",
    "BOOT_FAIL",
    "DEADLINE",
    "OUT_OF_MEMORY",
    "REVOKED",
}


def trial_state(slurm_state: str) -> str | None:
    """queued | running | suspended for a live job; None for an ended or unknown one."""
    s = slurm_state.split()[0].rstrip("+").upper() if slurm_state else ""
    if s in _QUEUED:
        return "queued"
    if s in _RUNNING:
        return "running"
    if s in _SUSPENDED:
        return "suspended"
    return None


@dataclass
class JobInfo:
    job_id: str  # "123" or "123_4" for an array task
    state: str  # Slurm's state name, e.g. PENDING, RUNNING, TIMEOUT
    reason: str = ""


class SlurmUnavailable(UserError):
    """The Slurm tools are missing or the controller does not answer."""


def _run(argv: list[str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    if shutil.which(argv[0]) is None:
        raise SlurmUnavailable(
            f"`{argv[0]}` is not on PATH: this machine is not a Slurm submit host (load the Slurm module or use "
            "another backend)"
        )
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise SlurmUnavailable(
            f"`{argv[0]}` did not answer in {timeout:.0f} s: is slurmctld up? (check `sinfo`)"
        ) from None


def one_line(text: str) -> str:
    """Slurm's most telling error line, without the tool's prefix."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln.lower()] or lines or ["no output"]
    # sbatch says the cause first ("invalid partition specified: x") and the summary last
    # ("Batch job submission failed: Invalid partition name specified"); the summary of a
    # controller that is down is the clearer one, the cause is clearer for everything else.
    pick = errors[-1] if any("controller" in e.lower() for e in errors) else errors[0]
    return re.sub(r"^(sbatch|squeue|scancel|sacct|srun|slurm_\w+)(: error)?:\s*", "", pick, flags=re.I).strip()


def sbatch_refusal(exc: BaseException) -> str:
    """One line from whatever submitit raised when sbatch refused or could not reach Slurm."""
    text = str(exc)
    cause = exc.__cause__
    stderr = getattr(cause, "stderr", None) or getattr(exc, "stderr", None)
    if stderr:
        text = stderr if isinstance(stderr, str) else stderr.decode(errors="replace")
    return one_line(text)


def squeue(job_ids: list[str]) -> dict[str, JobInfo]:
    """States of the given jobs (array ids expand to their tasks) in one squeue call."""
    if not job_ids:
        return {}
    out = _run(["squeue", "--noheader", "--array", "--states=all", "--jobs=" + ",".join(job_ids), "--format=%i|%T|%r"])
    if out.returncode != 0:
        if "Invalid job id" in out.stderr:
            return {}  # every id has aged out of the controller's memory (MinJobAge)
        raise SlurmUnavailable(f"squeue failed: {one_line(out.stderr)} (is slurmctld up? check `sinfo`)")
    jobs = {}
    for line in out.stdout.splitlines():
        parts = line.strip().split("|")
        if len(parts) >= 2:
            jobs[parts[0]] = JobInfo(parts[0], parts[1], parts[2] if len(parts) > 2 else "")
    return jobs


def sacct(job_ids: list[str]) -> dict[str, JobInfo] | None:
    """States from the accounting database in one call; None where there is none (no slurmdbd)."""
    if not job_ids or shutil.which("sacct") is None:
        return None
    out = _run(
        ["sacct", "--noheader", "--parsable2", "--allocations", "--jobs=" + ",".join(job_ids), "--format=JobID,State"]
    )
    if out.returncode != 0:
        return None
    jobs = {}
    for line in out.stdout.splitlines():
        parts = line.strip().split("|")
        if len(parts) >= 2 and parts[0]:
            jobs[parts[0]] = JobInfo(parts[0], parts[1].split()[0])
    return jobs


def scancel(job_ids: list[str]) -> None:
    """Cancel the given jobs or array tasks in one call (Slurm sends SIGTERM, then SIGKILL after KillWait)."""
    if not job_ids:
        return
    out = _run(["scancel", *job_ids])
    if (
        out.returncode != 0
        and "already completing or completed" not in out.stderr
        and "Invalid job id" not in out.stderr
    ):
        raise SlurmUnavailable(f"scancel failed: {one_line(out.stderr)}")


@dataclass(frozen=True)
class Limits:
    """The controller's limits on one submission: an array's indexes run 0..max_array_size-1, and
    at most max_job_count jobs live in the controller at once (an array task counts as one)."""

    max_array_size: int = 1001  # Slurm's defaults, for a controller that cannot be asked
    max_job_count: int = 10000
    known: bool = False


def limits() -> Limits:
    """MaxArraySize and MaxJobCount from `scontrol show config` (Slurm's defaults when it cannot answer:
    `render` works off a submit host, and a refusal at submit still names the limit)."""
    try:
        out = _run(["scontrol", "show", "config"], timeout=30)
    except SlurmUnavailable:
        return Limits()
    if out.returncode != 0:
        return Limits()
    found = dict(re.findall(r"^(MaxArraySize|MaxJobCount)\s*=\s*(\d+)", out.stdout, re.M))
    defaults = Limits()
    return Limits(
        max_array_size=int(found.get("MaxArraySize", defaults.max_array_size)),
        max_job_count=int(found.get("MaxJobCount", defaults.max_job_count)),
        known="MaxArraySize" in found,
    )


# sbatch's words when a per-user or per-account submit limit (QOS MaxSubmitJobsPerUser, the
# association's MaxSubmitJobs, MaxJobCount) refuses an array: a smaller array may still fit.
_SUBMIT_LIMIT = re.compile(
    r"job submit limit|MaxSubmitJob|QOSMaxSubmitJob|AssocMaxSubmitJob|MaxJobCount|temporarily unable to accept job",
    re.I,
)


def is_submit_limit(refusal: str) -> bool:
    return bool(_SUBMIT_LIMIT.search(refusal))
