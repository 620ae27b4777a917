"""HTCondor's per-submission limit: a campaign with more trials than MAX_JOBS_PER_SUBMISSION (read
with the real htcondor2 bindings from the configuration CONDOR_CONFIG names) goes as several
clusters; when the schedd refuses a later cluster (e.g. MAX_JOBS_PER_OWNER), the clusters it took
stay on record, the rest is left for the next `ptbench submit`, which sends only that.

No schedd can run here (see test_htcondor_submit.py): condor_submit is conftest's stand-in; this module's
variant numbers the clusters it takes and refuses the calls `refuse` names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from .conftest import read_calls, standin_bin, write_campaign


def _bin(tmp_path: Path, refuse: tuple[int, ...] = ()) -> Path:
    bindir = standin_bin(tmp_path)
    counter = bindir / "submits.txt"
    calls = bindir / "calls.jsonl"
    (bindir / "condor_submit").write_text(
        f"""#!{sys.executable}
import json, os, pathlib, sys
with open({str(calls)!r}, "a") as fh:
    fh.write(json.dumps({{"prog": "condor_submit", "argv": sys.argv[1:]}}) + "\\n")
c = pathlib.Path({str(counter)!r})
n = int(c.read_text()) + 1 if c.exists() else 1
c.write_text(str(n))
if n in {refuse!r}:
    sys.stderr.write("ERROR: Number of submitted jobs would exceed MAX_JOBS_PER_OWNER\\n")
    sys.exit(1)
text = open(sys.argv[-1]).read()
rows = text.split(" from (\\n", 1)[1].split("\\n)")[0].splitlines()
print(f"{{len(rows)}} job(s) submitted to cluster {{700 + n}}.")
"""
    )
    config = tmp_path / "condor_config"
    config.write_text("MAX_JOBS_PER_SUBMISSION = 3\n")
    return bindir


def _cli(args: list[str], tmp_path: Path, bindir: Path) -> subprocess.CompletedProcess:
    env = dict(
        os.environ,
        PATH=f"{bindir}:{os.environ['PATH']}",
        CONDOR_CONFIG=str(tmp_path / "condor_config"),
        COLUMNS="250",
    )
    return subprocess.run(
        [sys.executable, "-m", "ptbench", *args], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300
    )


def test_more_trials_than_max_jobs_per_submission_go_as_several_clusters(tmp_path: Path, htcondor2) -> None:
    bindir = _bin(tmp_path)
    path = write_campaign(tmp_path, seeds=[0, 1, 2, 3])  # 2 agents x 4 seeds = 8 trials
    assert _cli(["render", str(path)], tmp_path, bindir).returncode == 0
    submit_dir = tmp_path / "results" / "ct" / "submit"
    rendered = [submit_dir / "htcondor.sub", submit_dir / "htcondor.2.sub", submit_dir / "htcondor.3.sub"]
    assert [len(list(htcondor2.Submit(p.read_text()).itemdata())) for p in rendered] == [3, 3, 2]
    res = _cli(["submit", str(path)], tmp_path, bindir)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "submitted 8 trial(s) to htcondor as clusters 701, 702, 703" in res.stdout
    jobs = json.loads((tmp_path / "results" / "ct" / "jobs.json").read_text())
    assert [s["job_id"] for s in jobs["submissions"]] == ["701", "702", "703"]
    assert [sorted(s["units"].values()) for s in jobs["submissions"]] == [
        ["701.0", "701.1", "701.2"],
        ["702.0", "702.1", "702.2"],
        ["703.0", "703.1"],
    ]
    assert len(jobs["units"]) == 8 and jobs["left"] == []
    descriptions = [Path(c["argv"][-1]) for c in read_calls(bindir) if c["prog"] == "condor_submit"]
    assert [len(list(htcondor2.Submit(d.read_text()).itemdata())) for d in descriptions] == [3, 3, 2]


def test_a_refused_cluster_leaves_the_rest_for_the_next_submit(tmp_path: Path, htcondor2) -> None:
    bindir = _bin(tmp_path, refuse=(2,))
    path = write_campaign(tmp_path, seeds=[0, 1, 2, 3])
    first = _cli(["submit", str(path)], tmp_path, bindir)
    assert first.returncode == 75, first.stdout + first.stderr
    assert "submitted 3 trial(s) to htcondor as cluster 701" in first.stdout
    assert "ct: 5 trial(s) left: the scheduler refused them (condor_submit failed" in first.stderr
    cdir = tmp_path / "results" / "ct"
    jobs = json.loads((cdir / "jobs.json").read_text())
    taken = dict(jobs["units"])
    assert len(taken) == 3 and len(jobs["left"]) == 5
    # the schedd's log says the first cluster's jobs are queued: the next submit sends only the rest
    from .joblog_writer import JobLog

    log = JobLog(cdir / "condor" / "jobs.log")
    for tid, job in taken.items():
        log.submitted(job, tid)
    second = _cli(["submit", str(path)], tmp_path, bindir)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "submitted 5 trial(s) to htcondor as clusters 703, 704" in second.stdout
    after = json.loads((cdir / "jobs.json").read_text())
    assert after["left"] == [] and len(after["units"]) == 8
    assert {t: after["units"][t] for t in taken} == taken
