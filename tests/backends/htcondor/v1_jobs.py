"""Run in a subprocess: build the job ClassAds of a submit description offline with the v1
`htcondor` module (htcondor 24.x; 25.x dropped it) and print them as JSON, one object per proc.

usage: python v1_jobs.py DESCRIPTION [CLUSTER]
"""

import json
import sys
import warnings

warnings.simplefilter("ignore")  # "no condor_config" is expected: nothing here talks to a pool

import htcondor  # noqa: E402  (after the warning filter: importing it warns)

ATTRS = [
    "Cmd",
    "Args",
    "Arguments",
    "Iwd",
    "Env",
    "Environment",
    "Requirements",
    "RequestCpus",
    "RequestMemory",
    "RequestDisk",
    "RequestGPUs",
    "RequireGPUs",
    "ContainerImage",
    "WantContainer",
    "TransferContainer",
    "AllowedJobDuration",
    "KillSig",
    "JobMaxVacateTime",
    "JobMaxRetries",
    "OnExitRemove",
    "ConcurrencyLimits",
    "AcctGroup",
    "AccountingGroup",
    "AcctGroupUser",
    "UserLog",
    "Out",
    "Err",
    "SubmitEventNotes",
    "PeriodicRemove",
    "ShouldTransferFiles",
    "TransferExecutable",
    "JobBatchName",
    "ProjectName",
    "PtbenchTrial",
    "PtbenchCampaign",
    "PtbenchSeed",
    "ProcId",
    "ClusterId",
    "PeriodicRelease",
    "JobUniverse",
]


def main() -> None:
    text = open(sys.argv[1]).read()
    cluster = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    sub = htcondor.Submit(text)
    out = []
    for ad in sub.jobs(clusterid=cluster):
        row = {}
        for key in ATTRS:
            if key in ad:
                value = ad.get(key)
                row[key] = value if isinstance(value, (int, float, str, bool)) or value is None else str(ad.lookup(key))
        out.append(row)
    json.dump({"version": htcondor.version(), "jobs": out}, sys.stdout)


if __name__ == "__main__":
    main()
