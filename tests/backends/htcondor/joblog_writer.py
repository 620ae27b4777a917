"""Write HTCondor user-log events exactly as the schedd/shadow write them (non-XML user log,
ISO dates as in HTCondor >= 9), so the real htcondor2.JobEventLog can read them back."""

from __future__ import annotations

import time
from pathlib import Path

_SUBMIT_HOST = "<10.0.0.1:9618?addrs=10.0.0.1-9618&alias=submit.example.org&noUDP&sock=schedd_1234_abcd>"
_EXEC_HOST = "<10.0.0.7:9618?addrs=10.0.0.7-9618&alias=gpu07.example.org&noUDP&sock=startd_1_2>"
_USAGE = "Usr 0 00:00:00, Sys 0 00:00:00"


class JobLog:
    def __init__(self, path: Path, start: float = 1_740_823_200.0) -> None:
        self.path = path
        self.now = start
        path.parent.mkdir(parents=True, exist_ok=True)

    def _event(self, code: int, job: str, headline: str, body: list[str], advance: float) -> None:
        self.now += advance
        cluster, proc = job.split(".")
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.now))
        lines = [f"{code:03d} ({int(cluster):03d}.{int(proc):03d}.000) {stamp} {headline}", *body, "..."]
        with open(self.path, "a") as fh:
            fh.write("\n".join(lines) + "\n")

    def submitted(self, job: str, trial_id: str | None, advance: float = 1) -> None:
        self._event(
            0,
            job,
            f"Job submitted from host: {_SUBMIT_HOST}",
            [f"    ptbench trial {trial_id}"] if trial_id else [],
            advance,
        )

    def executing(self, job: str, advance: float = 5) -> None:
        self._event(
            1,
            job,
            f"Job executing on host: {_EXEC_HOST}",
            [
                "\tSlotName: slot1_1@gpu07.example.org",
                '\tCondorScratchDir = "/var/lib/condor/execute/dir_4242"',
                "\tCpus = 16",
                "\tDisk = 419430400",
                "\tGPUs = 1",
                "\tMemory = 131072",
            ],
            advance,
        )

    def evicted(self, job: str, advance: float = 60) -> None:
        self._event(
            4,
            job,
            "Job was evicted.",
            [
                "\t(0) CPU times",
                f"\t\t{_USAGE}  -  Run Remote Usage",
                f"\t\t{_USAGE}  -  Run Local Usage",
                "\t0  -  Run Bytes Sent By Job",
                "\t0  -  Run Bytes Received By Job",
            ],
            advance,
        )

    def held(self, job: str, reason: str, code: int, subcode: int = 0, advance: float = 60) -> None:
        self._event(12, job, "Job was held.", [f"\t{reason}", f"\tCode {code} Subcode {subcode}"], advance)

    def released(self, job: str, advance: float = 60) -> None:
        self._event(13, job, "Job was released.", ["\tvia condor_release (by user alice)"], advance)

    def terminated(self, job: str, return_value: int, advance: float = 60) -> None:
        self._event(
            5,
            job,
            "Job terminated.",
            [
                f"\t(1) Normal termination (return value {return_value})",
                f"\t\t{_USAGE}  -  Run Remote Usage",
                f"\t\t{_USAGE}  -  Run Local Usage",
                f"\t\t{_USAGE}  -  Total Remote Usage",
                f"\t\t{_USAGE}  -  Total Local Usage",
                "\t0  -  Run Bytes Sent By Job",
                "\t0  -  Run Bytes Received By Job",
                "\t0  -  Total Bytes Sent By Job",
                "\t0  -  Total Bytes Received By Job",
                "\tPartitionable Resources :    Usage  Request Allocated",
                "\t   Cpus                 :                16        16",
                "\t   Disk (KB)            :       30 409600000 419430400",
                "\t   GPUs                 :                 1         1",
                "\t   Memory (MB)          :        0   131072    131072",
            ],
            advance,
        )

    def aborted(self, job: str, reason: str = "via condor_rm (by user alice)", advance: float = 60) -> None:
        self._event(9, job, "Job was aborted.", [f"\t{reason}"], advance)
