"""`jobs.json`, read and written in one place (backends/jobs.py): the four shapes written before
`schema_version` are migrated on read, a newer version is refused with one line (exit 2 from the
CLI), a corrupt file names itself, and two backends never share a campaign's table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ptbench.backends.jobs import SCHEMA_VERSION, JobsFile, write_jobs
from ptbench.backends.registry import get_backend
from ptbench.core.errors import UserError
from tests.conftest import ptbench


def _write(folder: Path, data: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "jobs.json").write_text(json.dumps(data))


def test_old_slurm_trial_table_is_migrated(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "backend": "slurm",
            "submissions": [
                {"job_id": "10", "submitted_at": 1.0, "trials": 2, "script": "s10", "folder": "f"},
                {"job_id": "11", "submitted_at": 2.0, "trials": 1, "script": "s11", "folder": "f"},
            ],
            "trials": {"a": "10_0", "b": "11_0", "c": "10_1"},
        },
    )
    jobs = JobsFile.load(tmp_path)
    assert jobs is not None and jobs.schema_version == SCHEMA_VERSION and jobs.kind == "trials"
    assert [s.units for s in jobs.submissions] == [{"a": "10_0", "c": "10_1"}, {"b": "11_0"}]
    assert jobs.units == {"a": "10_0", "b": "11_0", "c": "10_1"} and jobs.submissions[1].script == "s11"


def test_old_htcondor_trial_table_is_migrated(tmp_path: Path) -> None:
    sub = {"cluster": 51, "submitted_at": 1.0, "via": "condor_submit", "description": "d.sub", "max_retries": 3}
    _write(
        tmp_path,
        {
            "backend": "htcondor",
            "log": "/x/jobs.log",
            "submissions": [{**sub, "procs": {"a": 0, "b": 1}}],
            "trials": {"a": "51.0", "b": "51.1"},
        },
    )
    jobs = JobsFile.load(tmp_path)
    assert jobs is not None and jobs.log == "/x/jobs.log"
    (s,) = jobs.submissions
    assert s.job_id == "51" and s.procs == {"a": 0, "b": 1} and s.via == "condor_submit" and s.max_retries == 3


def test_old_rollout_tables_are_migrated(tmp_path: Path) -> None:
    _write(tmp_path / "local", {"backend": "local", "jobs": {"shard-0000-of-0002": 41, "shard-0001-of-0002": 42}})
    local = JobsFile.load(tmp_path / "local", "shards")
    assert local is not None and local.units == {"shard-0000-of-0002": "41", "shard-0001-of-0002": "42"}
    _write(tmp_path / "slurm", {"backend": "slurm", "jobs": {"0": "77_0", "1": "77_1"}})
    replicas = JobsFile.load(tmp_path / "slurm", "tool-servers")
    assert replicas is not None and replicas.kind == "tool-servers" and replicas.submissions[0].job_id == "77"
    _write(
        tmp_path / "condor", {"backend": "htcondor", "cluster": 88, "procs": 2, "via": "bindings", "description": "s"}
    )
    shards = JobsFile.load(tmp_path / "condor", "shards")
    assert shards is not None and shards.units == {"shard-00000-of-00002": "88.0", "shard-00001-of-00002": "88.1"}


def test_a_newer_schema_is_refused_with_one_line(tmp_path: Path) -> None:
    _write(tmp_path, {"schema_version": SCHEMA_VERSION + 1, "backend": "slurm"})
    with pytest.raises(UserError, match=r"schema_version 2 is newer than this ptbench reads \(1\); upgrade ptbench"):
        JobsFile.load(tmp_path)


def test_status_refuses_a_newer_jobs_file_with_exit_2(tmp_path: Path, write_campaign) -> None:
    camp = write_campaign(
        """
        name: c
        agents: [{name: base-model}]
        base_models: [{id: local/tiny, path: "@MODEL@"}]
        tasks: [{name: arithmetic, options: {digits: 1, n_test: 4}}]
        seeds: [0]
        budget: {hours: 0.01, gpus: 0}
        backend: {name: slurm}
        results_dir: "@RESULTS@"
        """
    )
    assert ptbench("plan", str(camp)).returncode == 0
    _write(tmp_path / "results" / "c", {"schema_version": 99, "backend": "slurm"})
    res = ptbench("status", str(camp))
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "Traceback" not in res.stderr
    assert "jobs.json: schema_version 99 is newer than this ptbench reads" in res.stderr


def test_corrupt_and_foreign_tables(tmp_path: Path) -> None:
    (tmp_path / "jobs.json").write_text("{not json")
    with pytest.raises(UserError, match="not valid JSON.*move it aside"):
        JobsFile.load(tmp_path)
    _write(tmp_path, {"schema_version": 1, "backend": ["slurm"]})
    with pytest.raises(UserError, match=r"jobs.json: field backend: .*the file is corrupt.*; move it aside"):
        JobsFile.load(tmp_path)
    # a plugin's backend (ptbench.plugins) not installed here: the table reads, its lookup names it
    _write(tmp_path, {"schema_version": 1, "backend": "pbs"})
    table = JobsFile.load(tmp_path)
    assert table is not None and table.backend == "pbs"
    with pytest.raises(UserError, match=r"unknown backend 'pbs' \(known: htcondor, local, slurm"):
        get_backend(table.backend)
    _write(tmp_path, {"schema_version": 1, "backend": "slurm", "units": {"a": "1_0"}})
    with pytest.raises(UserError, match="submitted with the slurm backend"):
        with JobsFile.locked(tmp_path, "htcondor"):
            pass
    # a rollout's folder starts afresh on each run, whatever was there
    table = write_jobs(tmp_path / "out", "local", "shards", "local", {"shard-0000-of-0001": "5"})
    assert JobsFile.load(tmp_path / "out", "shards") == table
    assert json.loads((tmp_path / "out" / "jobs.json").read_text())["schema_version"] == SCHEMA_VERSION
