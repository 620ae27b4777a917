"""Job identity (core/jobenv.py) asks the registered backends, naming none: each backend's reader
answers for its own jobs' environments and for no other, the one a wrapper named (PTBENCH_BACKEND)
is asked first, and a process outside any job is local."""

from __future__ import annotations

from pathlib import Path

from ptbench.backends.htcondor import HTCondorBackend
from ptbench.backends.local import LocalBackend
from ptbench.backends.registry import BACKENDS, load_job_readers
from ptbench.backends.slurm import SlurmBackend
from ptbench.core.jobenv import job_identity

SLURM_ARRAY = {"SLURM_JOB_ID": "812", "SLURM_ARRAY_JOB_ID": "800", "SLURM_ARRAY_TASK_ID": "12"}


def test_each_reader_knows_its_own_jobs_only(tmp_path: Path) -> None:
    ad = tmp_path / ".job.ad"
    ad.write_text('ClusterId = 51\nProcId = 3\nOwner = "me"\n')
    condor = {"_CONDOR_JOB_AD": str(ad)}
    assert SlurmBackend.job_identity(SLURM_ARRAY) == "800_12"
    assert SlurmBackend.job_identity({"SLURM_JOB_ID": "77"}) == "77"
    assert HTCondorBackend.job_identity(condor) == "51.3"  # a process started by hand in a job: the job ad
    assert HTCondorBackend.job_identity({"PTBENCH_BACKEND": "htcondor", "PTBENCH_JOB_ID": "5.0"}) == "5.0"
    for reader in (SlurmBackend.job_identity, HTCondorBackend.job_identity, LocalBackend.job_identity):
        assert reader({}) is None
    assert SlurmBackend.job_identity(condor) is None and HTCondorBackend.job_identity(SLURM_ARRAY) is None
    assert LocalBackend.job_identity(SLURM_ARRAY) is None


def test_job_identity_asks_the_registered_backends(tmp_path: Path) -> None:
    load_job_readers()
    assert {"local", "slurm", "htcondor"} <= set(BACKENDS.names())
    assert job_identity(SLURM_ARRAY) == ("slurm", "800_12")  # found by its reader, no wrapper variable
    wrapped = {**SLURM_ARRAY, "PTBENCH_BACKEND": "slurm"}
    assert job_identity(wrapped) == ("slurm", "800_12")
    # the local backend run inside a Slurm allocation: the wrapper that started the runner says local
    assert job_identity({**SLURM_ARRAY, "PTBENCH_BACKEND": "local"}) == ("local", None)
    assert job_identity({"PTBENCH_BACKEND": "htcondor", "PTBENCH_JOB_ID": "9.1"}) == ("htcondor", "9.1")
    # a backend this process has not loaded (a plugin): its wrapper's PTBENCH_JOB_ID still says the job
    assert job_identity({"PTBENCH_BACKEND": "site-pbs", "PTBENCH_JOB_ID": "4.pbs"}) == ("site-pbs", "4.pbs")
    assert job_identity({}) == ("local", None)
