"""The local backend as a user drives it: run, status, re-run, replace, cancel."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.conftest import ptbench

CAMPAIGN = """
name: loc
agents: [{name: quick-copy}, {name: slow-copy, options: {seconds: SECONDS}}]
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [{name: arithmetic, options: {n_test: 6}}]
seeds: [0, 1]
budget: {hours: 1, gpus: 0, grace_seconds: 2}
results_dir: "@RESULTS@"
parallelism: 2
evaluation: {engine: transformers}
"""


def _results(cdir: Path) -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text()) for p in cdir.glob("*/result.json")}


@pytest.mark.slow
@pytest.mark.integration
def test_run_status_rerun_and_replace(write_campaign, test_agents, tmp_path):
    path = write_campaign(CAMPAIGN.replace("SECONDS", "1"))
    first = ptbench("run", str(path), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    cdir = tmp_path / "results" / "loc"
    results = _results(cdir)
    assert sorted(results) == [
        "quick-copy__tiny__arithmetic__s0",
        "quick-copy__tiny__arithmetic__s1",
        "slow-copy__tiny__arithmetic__s0",
        "slow-copy__tiny__arithmetic__s1",
    ]
    assert {r["status"] for r in results.values()} == {"completed"}
    assert all(r["primary_metric"]["n"] == 6 for r in results.values())
    assert "| quick-copy |" in first.stdout and "(n=2)" in first.stdout
    for f in ("results.md", "results.csv", "results.tex", "results.json"):
        assert (cdir / "tables" / f).is_file()

    status = ptbench("status", str(path), cwd=tmp_path)
    assert status.returncode == 0
    assert "4 completed" in status.stdout

    mtimes = {k: (cdir / k / "result.json").stat().st_mtime for k in results}
    again = ptbench("run", str(path), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "nothing to run" in again.stdout
    assert "| quick-copy |" in again.stdout
    assert {k: (cdir / k / "result.json").stat().st_mtime for k in results} == mtimes

    path.write_text(path.read_text().replace("n_test: 6", "n_test: 7"))
    refused = ptbench("plan", str(path), cwd=tmp_path)
    assert refused.returncode == 2
    assert "exist with a different spec" in refused.stderr and "--replace" in refused.stderr
    replaced = ptbench("plan", str(path), "--replace", cwd=tmp_path)
    assert replaced.returncode == 0, replaced.stderr
    assert "4 replaced" in replaced.stdout
    assert len(list((cdir / ".replaced").iterdir())) == 4  # moved aside, not deleted
    assert _results(cdir) == {}


@pytest.mark.slow
@pytest.mark.integration
def test_cancel_a_running_campaign(write_campaign, test_agents, tmp_path):
    path = write_campaign(
        CAMPAIGN.replace("SECONDS", "600").replace("quick-copy", "slow-copy, label: other, options: {seconds: 600}")
    )
    runner = subprocess.Popen(
        [sys.executable, "-m", "ptbench", "run", str(path)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    cdir = tmp_path / "results" / "loc"
    deadline = time.monotonic() + 120
    while len(list(cdir.glob("*/workspace/starts.txt"))) < 2:
        assert time.monotonic() < deadline and runner.poll() is None, (
            runner.stderr.read() if runner.poll() is not None else "agents never started"
        )
        time.sleep(0.3)
    running = ptbench("status", str(path), cwd=tmp_path)
    assert "2 running" in running.stdout and "2 pending" in running.stdout
    cancel = ptbench("cancel", str(path), cwd=tmp_path)
    assert cancel.returncode == 0, cancel.stderr
    assert "cancelled 4 trial(s)" in cancel.stdout
    out, err = runner.communicate(timeout=120)
    results = _results(cdir)
    assert len(results) == 4 and {r["status"] for r in results.values()} == {"cancelled"}
    leftovers = []
    for p in psutil.process_iter():
        try:
            if str(cdir) in p.environ().get("PTBENCH_TRIAL_DIR", ""):
                leftovers.append(p)
        except psutil.Error:
            pass
    assert leftovers == []
    assert "4 cancelled" in ptbench("status", str(path), cwd=tmp_path).stdout


@pytest.mark.slow
@pytest.mark.integration
def test_replace_refuses_a_trial_whose_runner_is_working(write_campaign, test_agents, tmp_path):
    path = write_campaign(CAMPAIGN.replace("SECONDS", "600").replace("seeds: [0, 1]", "seeds: [0]"))
    assert ptbench("plan", str(path), cwd=tmp_path).returncode == 0
    trial = tmp_path / "results" / "loc" / "slow-copy__tiny__arithmetic__s0"
    runner = subprocess.Popen([sys.executable, "-m", "ptbench", "trial", "run", str(trial)], cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while not (trial / "workspace" / "starts.txt").exists():
            assert time.monotonic() < deadline
            time.sleep(0.2)
        path.write_text(path.read_text().replace("n_test: 6", "n_test: 5"))
        refused = ptbench("plan", str(path), "--replace", cwd=tmp_path)
        assert refused.returncode == 2 and "a runner is still working on this trial" in refused.stderr
        assert (trial / "trial.json").exists() and not (trial.parent / ".replaced").exists()
    finally:
        assert ptbench("cancel", str(trial.parent), "slow-copy__tiny__arithmetic__s0").returncode == 0
        runner.wait(timeout=60)
