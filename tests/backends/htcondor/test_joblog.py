"""Tracking from the job event log: logs written in HTCondor's own format (joblog_writer), read by
the real htcondor2.JobEventLog. No schedd runs here, so the schedd's side is the log file itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from ptbench.backends.htcondor.backend import HTCondorBackend, job_log
from ptbench.backends.htcondor.joblog import read_job_log
from ptbench.plan import plan_campaign
from ptbench.spec import load_campaign
from ptbench.trial import Attempt, StageMark, TrialDir

from .conftest import write_campaign
from .joblog_writer import JobLog

DURATION_REASON = "The job exceeded allowed job duration of 11:10:00"


def _planned(tmp_path: Path):
    path = write_campaign(tmp_path)
    plan = plan_campaign(load_campaign(path))
    return path, plan, {t.id: t for t in plan.trials}


def _ran_until(trial: TrialDir, job_id: str, solve_seconds: float) -> None:
    """What a runner leaves when it is stopped in the solve stage: attempt open, time persisted."""
    state = trial.load_state()
    state.attempts.append(
        Attempt(number=1, started_at=time.time() - solve_seconds, host="gpu07", pid=4242, job_id=job_id)
    )
    state.stages["prepare"] = StageMark(done_at=time.time() - solve_seconds, outcome="ok")
    state.solve_seconds_used = solve_seconds
    trial.save_state(state)


def test_event_log_parses_every_event_kind(tmp_path: Path, htcondor2) -> None:
    log = JobLog(tmp_path / "jobs.log")
    for p in range(5):
        log.submitted(f"42.{p}", f"t{p}")
    log.executing("42.0")
    log.executing("42.1")
    log.evicted("42.1")
    log.executing("42.2")
    log.evicted("42.2")
    log.held("42.2", DURATION_REASON, 46)
    log.executing("42.3")
    log.terminated("42.3", 75)
    log.executing("42.4")
    log.held("42.4", "Error from slot1_1@gpu07: memory usage exceeded request_memory", 34, 102)
    log.released("42.4")
    log.executing("42.4")
    log.terminated("42.4", 0)
    log.submitted("43.0", None)
    log.aborted("43.0")
    jobs = read_job_log(log.path)
    assert {j: v.trial_id for j, v in jobs.items()} == {
        "42.0": "t0",
        "42.1": "t1",
        "42.2": "t2",
        "42.3": "t3",
        "42.4": "t4",
        "43.0": None,
    }
    assert jobs["42.0"].state == "running" and jobs["42.0"].host == "slot1_1@gpu07.example.org"
    assert jobs["42.1"].state == "queued" and jobs["42.1"].evictions == 1
    assert jobs["42.2"].state == "held" and jobs["42.2"].duration_hold[:2] == (46, DURATION_REASON)
    assert jobs["42.3"].state == "exited" and jobs["42.3"].return_value == 75
    assert jobs["42.4"].return_value == 0 and jobs["42.4"].executions == 2 and jobs["42.4"].hold_code is None
    assert jobs["43.0"].state == "removed"
    assert [e["event"] for e in jobs["42.2"].events] == [
        "condor_submitted",
        "condor_executing",
        "condor_evicted",
        "condor_held",
    ]


def test_scheduler_states_per_trial(tmp_path: Path, htcondor2) -> None:
    _, plan, trials = _planned(tmp_path)
    ids = sorted(trials)
    log = JobLog(job_log(plan.campaign_dir))
    for p, tid in enumerate(ids):
        log.submitted(f"7.{p}", tid)
    log.executing("7.0")
    log.executing("7.1")
    log.evicted("7.1")
    log.executing("7.2")
    log.terminated("7.2", 75)
    log.executing("7.3")
    log.held("7.3", "Error from slot1_1@gpu07: Job has gone over cgroup memory limit of 131072 megabytes.", 34)
    states = HTCondorBackend().scheduler_states(plan.campaign_dir, plan.trials)
    assert states[ids[0]] == "running"
    assert states[ids[1]] == "requeued"  # evicted: HTCondor runs it again, the runner resumes
    assert states[ids[2]] == "requeued"  # exit 75 and retry_until lets it run again
    assert states[ids[3]].startswith("held: Error from slot1_1@gpu07: Job has gone over cgroup memory limit")
    assert not any(t.result_json.exists() for t in plan.trials)  # only a duration hold decides a result
    forwarded = [json.loads(line)["event"] for line in trials[ids[1]].events_jsonl.read_text().splitlines()]
    assert forwarded == ["condor_submitted", "condor_executing", "condor_evicted"]


def test_held_for_duration_becomes_timed_out_with_the_reason(tmp_path: Path, htcondor2) -> None:
    """Acceptance: a job log of a held-for-duration job turns into a `timed_out` trial, reason shown."""
    path, plan, trials = _planned(tmp_path)
    tid = sorted(trials)[0]
    trial = trials[tid]
    _ran_until(trial, "9.0", solve_seconds=7000.0)
    log = JobLog(job_log(plan.campaign_dir))
    log.submitted("9.0", tid)
    log.executing("9.0")
    log.held("9.0", DURATION_REASON, 46, advance=40200)
    log.aborted(
        "9.0",
        "The job attribute PeriodicRemove expression '(JobStatus == 5) && (HoldReasonCode == 46)' evaluated to TRUE",
    )

    env = dict(os.environ, COLUMNS="250")
    proc = subprocess.run(
        [sys.executable, "-m", "ptbench", "status", str(path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    row = next(line for line in proc.stdout.splitlines() if tid in line)
    assert "timed_out" in row and "scheduler_time_limit" in row

    result = json.loads(trial.result_json.read_text())
    assert result["status"] == "timed_out"
    assert result["failure"]["kind"] == "scheduler_time_limit" and result["failure"]["stage"] == "solve"
    assert DURATION_REASON in result["failure"]["message"] and "HoldReasonCode 46" in result["failure"]["message"]
    assert result["provenance"]["scheduler"] == "htcondor" and result["provenance"]["job_id"] == "9.0"
    assert result["budget"]["solve_seconds_used"] == 7000.0
    state = trial.load_state()
    assert state.stages["record"].outcome == "timed_out" and state.attempts[-1].outcome == "held: scheduler time limit"
    events = [json.loads(line) for line in trial.events_jsonl.read_text().splitlines()]
    assert [e["event"] for e in events].count("condor_held") == 1
    assert any(e["event"] == "recorded" and e["status"] == "timed_out" for e in events)

    # A second look changes nothing: no duplicate events, the result stays.
    subprocess.run(
        [sys.executable, "-m", "ptbench", "status", str(path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    again = [json.loads(line) for line in trial.events_jsonl.read_text().splitlines()]
    assert len(again) == len(events)
    # The runner, should the job ever run again, sees a finished trial.
    run = subprocess.run(
        [sys.executable, "-m", "ptbench", "trial", "run", str(trial.path)], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0 and "already finished (timed_out)" in run.stdout
