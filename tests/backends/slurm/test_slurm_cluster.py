"""The slurm backend on the real single-node dev cluster (scripts/slurm-dev-cluster.sh), driven
through the `ptbench` command as a user would. Agents are shell scripts (tests/fixtures/agents via
PTBENCH_AGENTS_PATH) so each test takes seconds of agent time, not minutes of training."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from tests.backends.slurm.cluster import unreachable_conf
from tests.backends.slurm.conftest import all_finished, jobs_of, results, slurm_states, wait_for
from tests.conftest import ptbench

pytestmark = [pytest.mark.slurm, pytest.mark.slow]


def _status(cdir: Path) -> subprocess.CompletedProcess:
    return ptbench("status", str(cdir), env={"COLUMNS": "300"})


def _events(trial_dir: Path) -> list[dict]:
    return [json.loads(x) for x in (trial_dir / "events.jsonl").read_text().splitlines() if x.strip()]


def test_campaign_is_one_array_and_resubmits_only_what_is_left(slurm_campaign, test_agents, tmp_path: Path) -> None:
    camp = slurm_campaign("arr", seeds=[0, 1, 2], agents=[{"name": "slow-copy", "options": {"seconds": 3}}])
    res = ptbench("submit", str(camp))
    assert res.returncode == 0, res.stderr
    cdir = tmp_path / "results" / "arr"
    jobs = jobs_of(cdir)
    assert jobs["backend"] == "slurm" and len(jobs["submissions"]) == 1
    array = jobs["submissions"][0]["job_id"]
    assert sorted(jobs["units"].values()) == [f"{array}_{i}" for i in range(3)]
    # the script Slurm got is the one `ptbench render` shows
    rendered = Path(ptbench("render", str(camp)).stdout.strip()).read_text()
    assert (cdir / "slurm" / f"{array}_submission.sh").read_text() == rendered

    again = ptbench("submit", str(camp))  # everything is queued or running: nothing twice
    assert again.returncode == 0 and "nothing to submit" in again.stdout
    status = _status(cdir)
    assert status.returncode == 0 and any(s in status.stdout for s in ("queued", "running"))

    wait_for(all_finished(cdir, 3), 300, "three trials to finish")
    done = results(cdir)
    assert {r["status"] for r in done.values()} == {"completed"}
    assert {r["provenance"]["job_id"] for r in done.values()} == set(jobs["units"].values())
    assert all(r["provenance"]["scheduler"] == "slurm" for r in done.values())
    assert "3 completed" in _status(cdir).stdout

    more = slurm_campaign("arr", seeds=[0, 1, 2, 3], agents=[{"name": "slow-copy", "options": {"seconds": 3}}])
    res = ptbench("submit", str(more))
    assert res.returncode == 0 and "submitted 1 trial(s)" in res.stdout, res.stdout + res.stderr
    jobs = jobs_of(cdir)
    assert len(jobs["submissions"]) == 2 and len(jobs["units"]) == 4
    # the added seed runs to the end here, not into the next test's time on the one-node cluster
    wait_for(all_finished(cdir, 4), 300, "the added trial to finish")
    assert {r["status"] for r in results(cdir).values()} == {"completed"}


def test_node_without_gpu_is_a_retryable_failure_and_retry_failed_resubmits(
    slurm_campaign, test_agents, tmp_path: Path
) -> None:
    """The dev node declares a gres H100 with no hardware behind it: the job is scheduled, the runner finds no GPU."""
    camp = slurm_campaign("gpu", budget={"gpus": 1, "gpu_type": "H100"}, max_requeues=0)
    assert ptbench("submit", str(camp)).returncode == 0
    cdir = tmp_path / "results" / "gpu"
    trial = next(cdir.glob("slow-copy*"))
    job = jobs_of(cdir)["units"][trial.name]
    wait_for(lambda: slurm_states([job]).get(job) == "FAILED", 120, "the job to end")
    failure = json.loads((trial / "state.json").read_text())["failure"]
    assert failure["kind"] == "no_gpu" and failure["retryable"] is True
    status = _status(cdir).stdout
    assert "no_gpu" in status and f"log: {cdir}/slurm/{job}_0_log.out" in status

    plain = ptbench("submit", str(camp))
    assert "nothing to submit" in plain.stdout and "--retry-failed" in plain.stdout
    res = ptbench("submit", str(camp), "--retry-failed")
    assert res.returncode == 0 and "submitted 1 trial(s)" in res.stdout
    wait_for(lambda: (trial / "result.json").exists(), 120, "the second attempt to record a result")
    result = json.loads((trial / "result.json").read_text())
    # max_requeues=0: the resubmitted attempt is one too many, so the runner records why it gave up
    assert (
        result["status"] == "setup_failed"
        and result["failure"]["kind"] == "no_gpu"
        and result["failure"]["stage"] == "prepare"
    )


def test_watchdog_stops_an_overrunning_agent_before_slurms_limit(slurm_campaign, test_agents, tmp_path: Path) -> None:
    camp = slurm_campaign(
        "wd",
        agents=[{"name": "slow-copy", "options": {"seconds": 600}}],
        budget={"hours": 8 / 3600, "grace_seconds": 2, "eval_minutes": 1, "margin_minutes": 1},
    )
    assert ptbench("submit", str(camp)).returncode == 0
    cdir = tmp_path / "results" / "wd"
    wait_for(all_finished(cdir, 1), 150, "the watchdog to end the trial")
    (result,) = results(cdir).values()
    assert result["status"] == "no_model" and result["failure"]["kind"] == "timeout"
    assert 7 <= result["budget"]["solve_seconds_used"] <= 9
    job = jobs_of(cdir)["units"][result["trial_id"]]
    assert slurm_states([job])[job] == "COMPLETED"  # not TIMEOUT: the job's own limit (3 min) was never reached


def test_scontrol_requeue_resumes_with_the_remaining_budget(slurm_campaign, test_agents, tmp_path: Path) -> None:
    """`scontrol requeue` kills the job and queues it again. Slurm holds a requeued job for about two
    minutes (BeginTime); the test releases it with `scontrol update StartTime=now` to save that wait."""
    camp = slurm_campaign("rq", agents=[{"name": "slow-copy", "options": {"seconds": 14}}], budget={"hours": 60 / 3600})
    assert ptbench("submit", str(camp)).returncode == 0
    cdir = tmp_path / "results" / "rq"
    trial = next(cdir.glob("slow-copy*"))
    job = jobs_of(cdir)["units"][trial.name]
    wait_for(lambda: (trial / "workspace" / "starts.txt").exists(), 60, "the agent to start")
    time.sleep(6)
    subprocess.run(["scontrol", "requeue", job], check=True, timeout=60)
    wait_for(lambda: any(e["event"] == "checkpointed" for e in _events(trial)), 60, "the runner to checkpoint")
    used = json.loads((trial / "state.json").read_text())["solve_seconds_used"]
    assert 5 <= used <= 14
    wait_for(lambda: slurm_states([job]).get(job) == "PENDING", 60, "the job to be queued again")
    subprocess.run(["scontrol", "update", f"JobId={job}", "StartTime=now"], check=True, timeout=60)
    wait_for(all_finished(cdir, 1), 240, "the requeued job to finish")
    result = json.loads((trial / "result.json").read_text())
    assert result["status"] == "completed"
    starts = [e for e in _events(trial) if e["event"] == "agent_started"]
    assert len(starts) == 2 and abs(starts[1]["seconds_left"] - (60 - used)) < 2  # the budget left, not a fresh one
    state = json.loads((trial / "state.json").read_text())
    assert [a["job_id"] for a in state["attempts"]] == [job, job]
    assert 14 <= result["budget"]["solve_seconds_used"] <= 60 and result["budget"]["solve_runs"] == 2


def test_cancel_leaves_no_process_and_records_cancelled(slurm_campaign, test_agents, tmp_path: Path) -> None:
    camp = slurm_campaign(
        "cx",
        seeds=[0, 1, 2],
        parallelism=2,
        agents=[{"name": "slow-copy", "options": {"seconds": 600}}],
        budget={"hours": 0.2},
    )
    assert ptbench("submit", str(camp)).returncode == 0
    cdir = tmp_path / "results" / "cx"
    wait_for(
        lambda: len(list(cdir.glob("*/workspace/starts.txt"))) == 2, 90, "two agents to be running (the third queued)"
    )
    res = ptbench("cancel", str(cdir))
    assert res.returncode == 0 and "cancelled 3 trial(s)" in res.stdout, res.stdout + res.stderr
    assert {r["status"] for r in results(cdir).values()} == {"cancelled"} and len(results(cdir)) == 3

    def leftovers() -> list[str]:
        found = []
        for p in psutil.process_iter(["cmdline", "environ"]):
            try:
                text = " ".join(p.info["cmdline"] or []) + " " + (p.info["environ"] or {}).get("PTBENCH_TRIAL_DIR", "")
            except psutil.Error:
                continue
            if str(cdir) in text and p.pid != os.getpid():
                found.append(text[:120])
        return found

    wait_for(lambda: not leftovers(), 60, f"every process of the campaign to end (left: {leftovers()})")
    jobs = list(jobs_of(cdir)["units"].values())
    # COMPLETING is Slurm's transient state while it cleans up a job's node
    wait_for(lambda: set(slurm_states(jobs).values()) <= {"CANCELLED", "COMPLETED"}, 60, "the jobs to leave COMPLETING")
    assert "3 cancelled" in _status(cdir).stdout


def test_time_limit_kill_is_recorded_with_the_stage_reached(slurm_campaign, test_agents, tmp_path: Path) -> None:
    """Margin set too small on purpose: --time is 1 minute and Slurm's warning signal comes 30 s before
    it, while the agent still has budget left."""
    camp = slurm_campaign(
        "tl",
        agents=[{"name": "slow-copy", "options": {"seconds": 300}}],
        budget={"hours": 50 / 3600, "grace_seconds": 0, "eval_minutes": 0, "margin_minutes": 0},
        backend={"name": "slurm", "options": {"signal_seconds": 30}},
    )
    assert ptbench("submit", str(camp)).returncode == 0
    cdir = tmp_path / "results" / "tl"
    wait_for(all_finished(cdir, 1), 150, "the time-limited job to end")
    (result,) = results(cdir).values()
    assert result["failure"]["kind"] == "scheduler_time_limit" and result["failure"]["stage"] == "solve"
    assert result["status"] == "timed_out" and result["budget"]["solve_seconds_used"] < 50
    assert "scheduler_time_limit" in _status(cdir).stdout


def test_unreachable_controller_is_one_line_and_nothing_is_recorded(
    slurm_campaign, test_agents, tmp_path: Path, slurm_cluster: str
) -> None:
    """A copy of the cluster's config pointing at a port where no slurmctld listens: what a client
    sees when the controller is down."""
    down = unreachable_conf(slurm_cluster, tmp_path / "down")
    camp = slurm_campaign("down")
    res = ptbench("submit", str(camp), env={"SLURM_CONF": str(down)}, timeout=120)
    assert res.returncode == 2
    assert (
        res.stderr.strip().count("\n") == 0 and "cannot reach slurmctld" in res.stderr and "Traceback" not in res.stderr
    )
    cdir = tmp_path / "results" / "down"
    assert not (cdir / "jobs.json").exists() and os.listdir(cdir / "slurm") == []
    assert not any(
        e["event"] == "submitted"
        for t in cdir.glob("*/events.jsonl")
        for e in map(json.loads, t.read_text().splitlines())
    )


def test_unknown_partition_is_slurms_refusal_in_one_line(slurm_campaign, test_agents, tmp_path: Path) -> None:
    camp = slurm_campaign("np", backend={"name": "slurm", "options": {"partition": "no-such-partition"}})
    res = ptbench("submit", str(camp))
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        "error: Slurm refused the submission: invalid partition specified: no-such-partition; nothing was submitted "
        "(check `sinfo`, and partition/account/qos in backend.options)"
    ]
    cdir = tmp_path / "results" / "np"
    assert not (cdir / "jobs.json").exists() and os.listdir(cdir / "slurm") == []


def test_sbatch_wrapper_renders_then_submits(slurm_campaign, test_agents, tmp_path: Path) -> None:
    camp = slurm_campaign("wrap")
    wrapper = Path(__file__).resolve().parents[3] / "submit" / "sbatch_submit.sh"
    dry = subprocess.run(["bash", str(wrapper), str(camp), "--dry-run"], capture_output=True, text=True, timeout=120)
    cdir = tmp_path / "results" / "wrap"
    assert dry.returncode == 0 and (cdir / "submit" / "slurm.sh").exists() and not (cdir / "jobs.json").exists(), (
        dry.stderr
    )
    res = subprocess.run(["bash", str(wrapper), str(camp)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and "submitted 1 trial(s) to slurm as job" in res.stdout, res.stdout + res.stderr
    wait_for(all_finished(cdir, 1), 120, "the wrapped submission to finish")
    assert [r["status"] for r in results(cdir).values()] == ["completed"]
