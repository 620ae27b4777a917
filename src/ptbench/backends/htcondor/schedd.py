"""The one place ptbench talks to an HTCondor schedd: submit, remove, query.

Through the `htcondor2` bindings when they can reach a schedd, otherwise through the
`condor_submit` / `condor_rm` / `condor_q` / `condor_history` programs. Errors become one line.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import warnings
from dataclasses import dataclass
from pathlib import Path

from ptbench.core.errors import UserError

_SUBMITTED = re.compile(r"(\d+)\s+job\(s\)\s+submitted\s+to\s+cluster\s+(\d+)", re.I)
_TERSE = re.compile(r"^\s*(\d+)\.(\d+)\s*-\s*(\d+)\.(\d+)\s*$", re.M)
JOB_STATUS = {1: "queued", 2: "running", 3: "removed", 4: "completed", 5: "held", 6: "running", 7: "suspended"}


@dataclass
class QueueEntry:
    job_id: str
    status: str
    hold_code: int | None = None
    hold_reason: str = ""
    exit_code: int | None = None


def one_line(text: str, limit: int = 400) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    msg = "; ".join(lines) or "no output"
    return msg if len(msg) <= limit else msg[: limit - 3] + "..."


def bindings():
    """The `htcondor2` module (ImportError without it). Imported with its "CONDOR_CONFIG is unset"
    warning silenced: on a machine with no pool configuration the bindings still parse submit
    descriptions and read job logs, and the warning would otherwise be a stray stderr line in
    every command that touches them (`ptbench render`'s one-line errors among them). Where a pool
    is needed, the failure to reach its schedd says so."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*CONDOR_CONFIG.*", category=UserWarning)
        import htcondor2
    return htcondor2


def check_client(how: str = "auto") -> str:
    """Before anything is planned or written: what `submit(how=…)` would submit through (the htcondor2
    bindings, condor_submit on PATH), or one line naming what to install. Reaching a schedd is the pool's
    business (`ptbench doctor --backend htcondor` asks the collector)."""
    if how in ("auto", "bindings"):
        try:
            bindings()
            return "the htcondor2 bindings"
        except ImportError:
            if how == "bindings":
                raise UserError(
                    "the htcondor backend (submit_with: bindings) needs the htcondor2 bindings: "
                    "pip install 'ptbench[condor]'"
                ) from None
    program = shutil.which("condor_submit")
    if program is None:
        raise UserError(
            "the htcondor backend needs the htcondor2 bindings (pip install 'ptbench[condor]') or condor_submit on PATH"
        )
    return program


def _schedd():
    """An htcondor2 Schedd, or None with the reason when the bindings cannot reach one."""
    try:
        htcondor2 = bindings()
    except ImportError:
        return None, "the htcondor2 bindings are not installed"
    try:
        return htcondor2.Schedd(), ""
    except Exception as exc:  # HTCondorException: no config, no collector, no local schedd
        return None, f"no schedd reachable through the bindings ({one_line(str(exc), 120)})"


def submit(description: Path, rows: list[dict[str, str]], how: str = "auto") -> tuple[int, str]:
    """Submit a written description; returns (cluster id, 'bindings' | 'condor_submit')."""
    why = "submit_with: condor_submit"
    if how in ("auto", "bindings"):
        schedd, why = _schedd()
        if schedd is not None:
            htcondor2 = bindings()

            try:
                sub = htcondor2.Submit(description.read_text())
                # `queue ... from` rows go as itemdata (proc i = row i); a plain `queue N` has none
                result = schedd.submit(sub, itemdata=iter([dict(r) for r in rows])) if rows else schedd.submit(sub)
            except Exception as exc:
                raise UserError(
                    f"HTCondor refused the submission: {one_line(str(exc))} (description: {description})"
                ) from None
            return int(result.cluster()), "bindings"
        if how == "bindings":
            raise UserError(f"cannot submit through the htcondor2 bindings: {why}; the description is {description}")
    program = shutil.which("condor_submit")
    if program is None:
        raise UserError(
            f"cannot submit to HTCondor: {why}, and condor_submit is not on PATH; "
            f"the description is {description} (run condor_submit on a submit node)"
        )
    proc = subprocess.run([program, str(description)], capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise UserError(f"condor_submit failed (exit {proc.returncode}): {one_line(proc.stderr + proc.stdout)}")
    m = _SUBMITTED.search(proc.stdout) or _TERSE.search(proc.stdout)
    if not m:
        raise UserError(f"condor_submit printed no cluster id: {one_line(proc.stdout + proc.stderr)}")
    cluster = int(m.group(2) if m.re is _SUBMITTED else m.group(1))
    return cluster, "condor_submit"


def remove(job_ids: list[str], reason: str = "ptbench cancel") -> str | None:
    """Remove jobs; returns a warning line when no scheduler could be reached, else None."""
    if not job_ids:
        return None
    schedd, why = _schedd()
    if schedd is not None:
        htcondor2 = bindings()
        try:
            schedd.act(htcondor2.JobAction.Remove, list(job_ids), reason)
            return None
        except Exception as exc:
            why = f"the schedd refused: {one_line(str(exc), 200)}"
    program = shutil.which("condor_rm")
    if program is None:
        return f"could not remove the HTCondor jobs ({why}; condor_rm not on PATH): run condor_rm {' '.join(job_ids)}"
    proc = subprocess.run([program, *job_ids], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        text = proc.stderr + proc.stdout
        # Jobs that already left the queue are not an error for a cancel.
        if "Couldn't find" in text or "not found" in text:
            return None
        return f"condor_rm failed (exit {proc.returncode}): {one_line(text)}"
    return None


def query(clusters: list[int]) -> dict[str, QueueEntry]:
    """Job states from condor_q, then condor_history for jobs that left the queue (fallback tracking)."""
    attrs = ["ClusterId", "ProcId", "JobStatus", "HoldReasonCode", "ExitCode", "HoldReason"]
    found: dict[str, QueueEntry] = {}
    for program in ("condor_q", "condor_history"):
        exe = shutil.which(program)
        if exe is None or not clusters:
            continue
        try:
            proc = subprocess.run(
                [exe, *map(str, clusters), "-af:t", *attrs], capture_output=True, text=True, timeout=120
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if proc.returncode != 0:
            continue
        for line in proc.stdout.splitlines():
            parts = line.split("\t")
            if len(parts) < 3 or not parts[0].isdigit():
                continue
            job_id = f"{parts[0]}.{parts[1]}"
            if job_id in found:
                continue
            code = _int(parts[3]) if len(parts) > 3 else None
            reason = parts[5] if len(parts) > 5 and parts[5] != "undefined" else ""
            found[job_id] = QueueEntry(
                job_id,
                JOB_STATUS.get(_int(parts[2]) or 0, "unknown"),
                code,
                reason,
                _int(parts[4]) if len(parts) > 4 else None,
            )
    return found


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


DEFAULT_MAX_JOBS_PER_SUBMISSION = 20000  # HTCondor's default


def max_jobs_per_submission() -> int:
    """The schedd's MAX_JOBS_PER_SUBMISSION (htcondor2.param), or HTCondor's default when the
    bindings or the configuration cannot say."""
    try:
        value = bindings().param.get("MAX_JOBS_PER_SUBMISSION")
    except Exception:  # no bindings, no configuration
        return DEFAULT_MAX_JOBS_PER_SUBMISSION
    try:
        return max(1, int(str(value).strip())) if value is not None else DEFAULT_MAX_JOBS_PER_SUBMISSION
    except ValueError:
        return DEFAULT_MAX_JOBS_PER_SUBMISSION
