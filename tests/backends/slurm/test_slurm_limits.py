"""A real cluster's limits on the dev cluster, which runs with Slurm's defaults (MaxArraySize 1001,
MaxJobCount 10000) and accounting (slurmdbd): a campaign bigger than MaxArraySize goes as several
arrays, and a per-user submit limit (a QOS's MaxSubmitJobsPerUser, set with sacctmgr) that refuses
part of a campaign leaves what it accepted on record, says how much is left, and a second
`ptbench submit` sends only the rest. Jobs are submitted held (`sbatch --hold`) and cancelled at
the end, so nothing runs: these tests are about submission."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ptbench
from tests.support import require

from .conftest import jobs_of

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

HELD = {"name": "slurm", "options": {"cpus_per_task": 1, "mem_gb": 1, "sbatch": {"hold": True}}}


def _config(name: str) -> str:
    out = subprocess.run(["scontrol", "show", "config"], capture_output=True, text=True, check=True).stdout
    m = re.search(rf"^{name}\s*=\s*(\S+)", out, re.M)
    assert m, f"scontrol show config has no {name}"
    return m.group(1)


def _tasks(arrays: list[str]) -> list[str]:
    out = subprocess.run(
        ["squeue", "-h", "-r", "-t", "all", "-j", ",".join(arrays), "-o", "%i"], capture_output=True, text=True
    )
    return out.stdout.split()


def _cancel(cdir: Path) -> None:
    if (cdir / "jobs.json").exists():
        arrays = [s["job_id"] for s in jobs_of(cdir)["submissions"]]
        subprocess.run(["scancel", *arrays], check=False)


def test_the_dev_cluster_has_slurms_default_limits(slurm_cluster: str) -> None:
    assert _config("MaxArraySize") == "1001" and _config("MaxJobCount") == "10000"


def test_a_campaign_bigger_than_max_array_size_goes_as_several_arrays(
    slurm_campaign, test_agents, tmp_path: Path
) -> None:
    camp = slurm_campaign("big", seeds=list(range(1200)), backend=HELD, parallelism=12)
    cdir = tmp_path / "results" / "big"
    try:
        rendered = ptbench("render", str(camp))
        assert rendered.returncode == 0, rendered.stderr
        scripts = [cdir / "submit" / "slurm.sh", cdir / "submit" / "slurm.2.sh"]
        arrays_rendered = [re.search(r"#SBATCH --array=(\S+)", p.read_text()).group(1) for p in scripts]
        assert arrays_rendered == ["0-1000%10", "0-198%2"]  # the throttle of 12 shared by size
        res = ptbench("submit", str(camp), timeout=900)
        assert res.returncode == 0, res.stdout + res.stderr
        jobs = jobs_of(cdir)
        assert jobs["schema_version"] == 1 and jobs["kind"] == "trials" and jobs["left"] == []
        arrays = [s["job_id"] for s in jobs["submissions"]]
        assert [len(s["units"]) for s in jobs["submissions"]] == [1001, 199] and len(arrays) == 2
        assert f"submitted 1200 trial(s) to slurm as jobs {arrays[0]}, {arrays[1]}" in res.stdout
        assert len(jobs["units"]) == 1200 and set(jobs["units"]) == {
            p.name for p in cdir.iterdir() if (p / "trial.json").exists()
        }
        tasks = _tasks(arrays)
        assert len(tasks) == 1200 and sorted(tasks) == sorted(jobs["units"].values())
        again = ptbench("submit", str(camp), timeout=900)  # everything is queued: nothing goes twice
        assert again.returncode == 0 and "nothing to submit" in again.stdout, again.stdout + again.stderr
        assert len(jobs_of(cdir)["submissions"]) == 2
    finally:
        _cancel(cdir)


def _sacctmgr(*args: str) -> None:
    subprocess.run(["sacctmgr", "-i", *args], capture_output=True, text=True, check=True)


def test_a_submit_limit_refuses_part_and_a_second_submit_continues(
    slurm_campaign, test_agents, tmp_path: Path, slurm_cluster: str
) -> None:
    require(
        _config("AccountingStorageType") == "accounting_storage/slurmdbd",
        "the dev cluster has no accounting (install slurmdbd and mariadb-server, restart it)",
    )
    qos = f"ptb-submit-limit-{os.getpid()}"
    _sacctmgr("add", "qos", qos, "MaxSubmitJobsPerUser=5")
    _sacctmgr("modify", "user", "root", "set", f"qos+={qos}")
    options = {**HELD["options"], "qos": qos}
    camp = slurm_campaign("lim", seeds=list(range(8)), backend={"name": "slurm", "options": options})
    cdir = tmp_path / "results" / "lim"
    try:
        first = ptbench("submit", str(camp))
        assert first.returncode == 75, first.stdout + first.stderr  # EX_TEMPFAIL: part of it, try again later
        assert "submitted 5 trial(s) to slurm" in first.stdout
        assert (
            "lim: 3 trial(s) left: the scheduler refused them (QOSMaxSubmitJobPerUserLimit); "
            f"run `ptbench submit {camp}` again" in first.stderr
        )
        jobs = jobs_of(cdir)
        accepted = dict(jobs["units"])
        assert len(accepted) == 5 and len(jobs["left"]) == 3 and not set(jobs["left"]) & set(accepted)
        assert sorted(_tasks([s["job_id"] for s in jobs["submissions"]])) == sorted(accepted.values())
        log = cdir / jobs["left"][0] / "events.jsonl"
        events = [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []
        assert not any(e["event"] == "submitted" for e in events)  # a trial left over was never submitted

        shown = ptbench("status", str(camp))
        assert shown.returncode == 0 and "3 trial(s) not submitted yet" in shown.stdout, shown.stdout + shown.stderr

        full = ptbench("submit", str(camp))  # the limit is still full: nothing goes, one line, nothing written
        assert full.returncode == 2 and full.stderr.count("\n") == 1, full.stderr
        assert "nothing was submitted" in full.stderr and "submit limit" in full.stderr
        assert jobs_of(cdir) == jobs

        _sacctmgr("modify", "qos", qos, "set", "MaxSubmitJobsPerUser=8")
        second = ptbench("submit", str(camp))
        assert second.returncode == 0, second.stdout + second.stderr
        assert "submitted 3 trial(s) to slurm" in second.stdout
        after = jobs_of(cdir)
        assert after["left"] == [] and len(after["units"]) == 8
        assert {t: after["units"][t] for t in accepted} == accepted  # the queued ones were not sent again
        assert sorted(_tasks([s["job_id"] for s in after["submissions"]])) == sorted(after["units"].values())
    finally:
        _cancel(cdir)
        subprocess.run(["sacctmgr", "-i", "modify", "user", "root", "set", f"qos-={qos}"], capture_output=True)
        subprocess.run(["sacctmgr", "-i", "delete", "qos", qos], capture_output=True)
