"""Submit, track and cancel against stand-in condor_submit / condor_q / condor_rm programs.

No HTCondor schedd can run on these machines (no package, no reachable source), and the real
htcondor2 bindings find none (Schedd() -> "Unable to locate local daemon"), so `submit_with: auto`
falls back to the condor_submit program: that program, condor_q and condor_rm are the stand-ins
from conftest.standin_bin on PATH. Everything up to them is real."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ptbench.backends.htcondor.backend import HTCondorBackend, job_log, load_jobs
from ptbench.plan import load_plan

from .conftest import REPO, read_calls, standin_bin, write_campaign
from .joblog_writer import JobLog


def _cli(args: list[str], tmp_path: Path, bindir: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", COLUMNS="250")
    return subprocess.run(
        [sys.executable, "-m", "ptbench", *args], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300
    )


def test_submit_records_cluster_and_procs_and_never_twice(tmp_path: Path, htcondor2) -> None:
    bindir = standin_bin(tmp_path, cluster=4242)
    path = write_campaign(tmp_path)
    proc = _cli(["submit", str(path)], tmp_path, bindir)
    assert proc.returncode == 0, proc.stderr
    assert "cluster 4242" in proc.stdout and "via condor_submit" in proc.stdout
    cdir = tmp_path / "results" / "ct"
    jobs = load_jobs(cdir)
    assert jobs is not None and jobs.backend == "htcondor"
    trials = [t.id for t in load_plan(cdir)]
    sub = jobs.submissions[0]
    assert int(sub.job_id) == 4242 and sub.via == "condor_submit" and sorted(sub.procs) == trials
    assert sorted(sub.procs.values()) == [0, 1, 2, 3] and jobs.units[trials[0]] == f"4242.{sub.procs[trials[0]]}"
    # proc i is row i of the description condor_submit got
    calls = read_calls(bindir)
    assert [c["prog"] for c in calls] == ["condor_submit"]
    rows = list(htcondor2.Submit(Path(calls[0]["argv"][-1]).read_text()).itemdata())
    assert {r["trial_id"]: i for i, r in enumerate(rows)} == sub.procs
    events = [json.loads(line) for line in (cdir / trials[0] / "events.jsonl").read_text().splitlines()]
    assert events[-1]["event"] == "submitted" and events[-1]["job_id"] == jobs.units[trials[0]]

    # The schedd logged the submissions: a second `submit` sends nothing again.
    log = JobLog(job_log(cdir))
    for tid, p in sub.procs.items():
        log.submitted(f"4242.{p}", tid)
    again = _cli(["submit", str(path)], tmp_path, bindir)
    assert again.returncode == 0, again.stderr
    assert "already have a job" in again.stderr or "nothing to submit" in again.stdout
    assert [c["prog"] for c in read_calls(bindir)] == ["condor_submit"]

    status = _cli(["status", str(path)], tmp_path, bindir)
    assert status.returncode == 0 and status.stdout.count("queued") >= 4, status.stdout


def test_failing_condor_submit_is_one_line_and_records_nothing(tmp_path: Path) -> None:
    err = (
        "\nERROR: Parse error in expression:\n\tRequirements = (TARGET.Foo ==\n\n"
        "ERROR: Failed to commit job submission into the queue.\n"
    )
    bindir = standin_bin(tmp_path, submit_rc=1, submit_err=err)
    path = write_campaign(tmp_path)
    proc = _cli(["submit", str(path)], tmp_path, bindir)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: condor_submit failed (exit 1): ERROR: Parse error in expression:")
    assert "Failed to commit job submission" in lines[0]
    cdir = tmp_path / "results" / "ct"
    assert not (cdir / "jobs.json").exists()
    for t in load_plan(cdir):
        assert not t.events_jsonl.exists() or "submitted" not in t.events_jsonl.read_text()


def test_cancel_removes_live_jobs_and_records_cancelled(tmp_path: Path, htcondor2) -> None:
    bindir = standin_bin(tmp_path, cluster=51)
    path = write_campaign(tmp_path)
    assert _cli(["submit", str(path)], tmp_path, bindir).returncode == 0
    cdir = tmp_path / "results" / "ct"
    procs = load_jobs(cdir).submissions[0].procs
    log = JobLog(job_log(cdir))
    for tid, p in procs.items():
        log.submitted(f"51.{p}", tid)
    done = next(t for t, p in procs.items() if p == 3)
    log.executing("51.3")
    log.terminated("51.3", 0)
    (cdir / done / "result.json").write_text("{}")  # its runner recorded a result
    proc = _cli(["cancel", str(path)], tmp_path, bindir)
    assert proc.returncode == 0, proc.stderr
    rm = [c for c in read_calls(bindir) if c["prog"] == "condor_rm"]
    assert len(rm) == 1 and rm[0]["argv"] == ["51.0", "51.1", "51.2"]
    for tid in procs:
        if tid == done:
            continue
        assert (cdir / tid / "cancel_requested").exists()
        assert json.loads((cdir / tid / "result.json").read_text())["status"] == "cancelled"
    assert "cancelled 3 trial(s)" in proc.stdout


def test_condor_q_is_the_fallback_when_the_log_cannot_be_read(tmp_path: Path) -> None:
    bindir = standin_bin(tmp_path, cluster=60)
    path = write_campaign(tmp_path)
    assert _cli(["submit", str(path)], tmp_path, bindir).returncode == 0
    cdir = tmp_path / "results" / "ct"
    jobs = load_jobs(cdir)
    by_proc = {p: t for t, p in jobs.submissions[0].procs.items()}
    assert not job_log(cdir).exists()  # the stand-in schedd writes no log
    (bindir / "queue.tsv").write_text(
        "60\t0\t2\tundefined\tundefined\tundefined\n"
        "60\t1\t1\tundefined\tundefined\tundefined\n"
        "60\t2\t5\t46\tundefined\tThe job exceeded allowed job duration of 1:00:00\n"
    )
    old = os.environ["PATH"]
    os.environ["PATH"] = f"{bindir}:{old}"
    try:
        states = HTCondorBackend().scheduler_states(cdir, load_plan(cdir))
    finally:
        os.environ["PATH"] = old
    assert states[by_proc[0]] == "running" and states[by_proc[1]] == "queued"
    assert states[by_proc[2]].startswith("held: The job exceeded allowed job duration")
    assert by_proc[3] not in states
    result = json.loads((cdir / by_proc[2] / "result.json").read_text())
    assert result["status"] == "timed_out" and "allowed job duration" in result["failure"]["message"]
    q = [c for c in read_calls(bindir) if c["prog"] == "condor_q"]
    assert q and q[0]["argv"][0] == "60" and "-af:t" in q[0]["argv"]


def test_condor_submit_script_renders_submits_and_is_tracked(tmp_path: Path, htcondor2) -> None:
    bindir = standin_bin(tmp_path, cluster=77)
    path = write_campaign(tmp_path)
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", PTBENCH=f"{sys.executable} -m ptbench")
    proc = subprocess.run(
        [str(REPO / "submit" / "condor_submit.sh"), str(path), "-batch-name", "mine"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "4 job(s) submitted to cluster 77." in proc.stdout
    cdir = tmp_path / "results" / "ct"
    call = [c for c in read_calls(bindir) if c["prog"] == "condor_submit"][0]
    assert call["argv"] == ["-batch-name", "mine", str(cdir / "submit" / "htcondor.sub")]
    assert (cdir / "condor").is_dir()  # the log's folder exists before condor_submit runs
    rows = list(htcondor2.Submit((cdir / "submit" / "htcondor.sub").read_text()).itemdata())
    # No jobs.json here: the job log alone (submit_event_notes) maps jobs to trials.
    log = JobLog(job_log(cdir))
    for p, r in enumerate(rows):
        log.submitted(f"77.{p}", r["trial_id"])
    log.executing("77.1")
    states = HTCondorBackend().scheduler_states(cdir, load_plan(cdir))
    assert states[rows[1]["trial_id"]] == "running" and states[rows[0]["trial_id"]] == "queued"
