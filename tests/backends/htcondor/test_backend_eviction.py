"""Eviction and restart as HTCondor does them: kill_sig (SIGTERM) to the running job, then the same
job started again on another slot. No schedd runs here, so the two starts are made by hand with
the environment the description gives a job (PTBENCH_BACKEND=htcondor, PTBENCH_JOB_ID=C.P); the
runner, its watchdog and the agent process are real."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from ptbench.plan import plan_campaign
from ptbench.spec import load_campaign

from .conftest import write_campaign
from .joblog_writer import JobLog

SLEEPER = {
    "name": "sleeper",
    "description": "test agent: sleeps through its first start, leaves at once when started again",
    "command": [
        "{{ python }}",
        "-c",
        "import pathlib, time; p = pathlib.Path('started'); first = not p.exists(); p.touch(); time.sleep(120 if first "
        "else 0)",
    ],
}


def test_an_evicted_job_resumes_and_both_attempts_show(tmp_path: Path, htcondor2, monkeypatch) -> None:
    agents = tmp_path / "agents" / "sleeper"
    agents.mkdir(parents=True)
    (agents / "agent.yaml").write_text(yaml.safe_dump(SLEEPER))
    monkeypatch.setenv("PTBENCH_AGENTS_PATH", str(tmp_path / "agents"))
    path = write_campaign(
        tmp_path,
        agents=[{"name": "sleeper"}],
        seeds=[0],
        budget={"hours": 0.05, "gpus": 0, "grace_seconds": 5, "eval_minutes": 5, "margin_minutes": 1},
    )
    plan = plan_campaign(load_campaign(path))
    trial = plan.trials[0]
    env = dict(os.environ, PTBENCH_BACKEND="htcondor", PTBENCH_JOB_ID="5.0")
    argv = [sys.executable, "-m", "ptbench", "trial", "run", str(trial.path)]

    first = subprocess.Popen(argv, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while not (trial.workspace / "started").exists():
        assert first.poll() is None and time.monotonic() < deadline, first.stdout.read().decode()
        time.sleep(0.2)
    time.sleep(1.5)  # some budget is used
    first.send_signal(signal.SIGTERM)  # HTCondor's kill_sig on eviction
    assert first.wait(timeout=120) == 75
    state = trial.load_state()
    used = state.solve_seconds_used
    assert len(state.attempts) == 1 and state.attempts[0].outcome == "interrupted by SIGTERM"
    assert used >= 1.0 and "solve" not in state.stages and not trial.result_json.exists()

    second = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stdout + second.stderr
    state = trial.load_state()
    assert [a.number for a in state.attempts] == [1, 2]
    assert [a.job_id for a in state.attempts] == ["5.0", "5.0"]
    assert state.attempts[1].outcome == "no_model" and state.solve_runs == 2
    assert state.solve_seconds_used >= used  # the second start continued the same budget
    events = [json.loads(line) for line in trial.events_jsonl.read_text().splitlines()]
    started = [e for e in events if e["event"] == "started"]
    assert [(e["attempt"], e["scheduler"], e["next_stage"]) for e in started] == [
        (1, "htcondor", "prepare"),
        (2, "htcondor", "solve"),
    ]
    assert any(e["event"] == "checkpointed" and e["signal"] == "SIGTERM" for e in events)
    result = json.loads(trial.result_json.read_text())
    assert result["provenance"]["scheduler"] == "htcondor" and result["provenance"]["job_id"] == "5.0"

    # The job log of that story: the backend reports the job finished and keeps the runner's result.
    from ptbench.backends.htcondor.backend import HTCondorBackend, job_log

    log = JobLog(job_log(plan.campaign_dir))
    log.submitted("5.0", trial.id)
    log.executing("5.0")
    log.evicted("5.0")
    log.executing("5.0")
    log.terminated("5.0", 0)
    assert HTCondorBackend().scheduler_states(plan.campaign_dir, [trial]) == {trial.id: "exited 0"}
    assert json.loads(trial.result_json.read_text())["status"] == "no_model"
