"""A stop signal at any point of the runner ends the trial recorded or resumable, never half-done.

The runner's signal handlers only set a flag; the stages honour it at safe points. Here a real
`ptbench trial run` gets SIGTERM right after each stage boundary, while evaluation runs, and while
the solve stage cleans up after the agent (login file removal, secret scrub): every time it exits 0
(recorded) or 75 (resumable), no copied login file stays in the trial's HOME, the canary key is in
no file, and a rerun finishes the trial.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ptbench.plan import plan_campaign
from ptbench.results.policy import marked_label
from ptbench.results.schema import ResultRecord
from ptbench.spec import load_campaign
from tests.results.synthetic import record as synthetic_record

CANARY = "sk-canary-stop-signal-0123456789abcdef"
LOGIN = "login-token-canary-9876543210fedcba"

AGENT = """\
name: login-agent
keys: [PTB_CANARY_API_KEY]
allow_real_key: true  # no upstream: the agent gets the key itself (the path under test), recorded and marked
auth_files:
  .tok/auth.json: "$PTB_LOGIN_SRC"
command:
  - bash
  - -c
  - >-
    echo $PTB_CANARY_API_KEY > key-copy.txt; cat $HOME/.tok/auth.json > $HOME/login-copy.txt;
    cp -r '{{ base_model }}' final_model; sleep 1; echo done
"""

# (event that marks the point, its field filter) -> where SIGTERM lands
POINTS = {
    "after-prepare": ("stage_done", {"stage": "prepare"}),
    "cleanup": ("agent_exited", {}),
    "after-solve": ("stage_done", {"stage": "solve"}),
    "after-collect": ("stage_done", {"stage": "collect"}),
    "after-integrity": ("stage_done", {"stage": "integrity"}),
    "during-evaluate": ("evaluating", {}),
}


@pytest.fixture
def trial_dir(tmp_path, tiny_model, monkeypatch) -> Path:
    agents = tmp_path / "agents" / "login-agent"
    agents.mkdir(parents=True)
    (agents / "agent.yaml").write_text(AGENT)
    login = tmp_path / "login.json"
    login.write_text(json.dumps({"token": LOGIN}))
    monkeypatch.setenv("PTBENCH_AGENTS_PATH", str(tmp_path / "agents"))
    monkeypatch.setenv("PTB_CANARY_API_KEY", CANARY)
    monkeypatch.setenv("PTB_LOGIN_SRC", str(login))
    campaign = tmp_path / "c.yaml"
    campaign.write_text(
        textwrap.dedent(f"""\
        name: stops
        agents: [{{name: login-agent}}]
        base_models: [{{id: local/tiny, path: {tiny_model}, label: tiny}}]
        tasks: [{{name: arithmetic, options: {{n_test: 4}}}}]
        seeds: [0]
        budget: {{hours: 0.05, gpus: 0, grace_seconds: 2}}
        results_dir: {tmp_path / "results"}
        """)
    )
    return plan_campaign(load_campaign(campaign)).trials[0].path


def _events(path: Path) -> list[dict]:
    try:
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    except (FileNotFoundError, json.JSONDecodeError):
        return []


def _wait_for(path: Path, event: str, fields: dict, proc: subprocess.Popen, timeout: float = 180) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.poll() is None:
        if any(e.get("event") == event and all(e.get(k) == v for k, v in fields.items()) for e in _events(path)):
            return True
        time.sleep(0.02)
    return False


def _run(trial: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "ptbench", "trial", "run", str(trial)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=dict(os.environ),
    )


def _assert_no_secret_left(trial: Path) -> None:
    assert not (trial / "home" / ".tok" / "auth.json").exists(), "copied login file left behind"
    for f in trial.rglob("*"):
        if f.is_file() and not f.is_symlink():
            data = f.read_bytes()
            assert CANARY.encode() not in data, f"canary key in {f}"
            assert LOGIN.encode() not in data, f"login token in {f}"


@pytest.mark.slow
@pytest.mark.parametrize("point", list(POINTS))
def test_sigterm_at_each_point_ends_recorded_or_resumable(trial_dir, point):
    event, fields = POINTS[point]
    proc = _run(trial_dir)
    try:
        reached = _wait_for(trial_dir / "events.jsonl", event, fields, proc)
        if reached:
            proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert reached, f"the runner ended before {point}: {out.decode(errors='replace')[-2000:]}"
    assert proc.returncode in (0, 75), out.decode(errors="replace")[-2000:]
    _assert_no_secret_left(trial_dir)
    if proc.returncode == 75:
        assert not (trial_dir / "result.json").exists()
        again = subprocess.run(
            [sys.executable, "-m", "ptbench", "trial", "run", str(trial_dir)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert again.returncode == 0, again.stdout + again.stderr
    result = json.loads((trial_dir / "result.json").read_text())
    assert result["status"] == "completed", result
    assert result["primary_metric"]["n"] == 4
    assert result["agent_credentials"] == "real_key"  # the opt-in, recorded, and marked in every table
    assert marked_label(ResultRecord.model_validate(result)).endswith("[real key]")
    _assert_no_secret_left(trial_dir)


def test_the_unsandboxed_mark_follows_the_recorded_sandbox_fact_not_its_name() -> None:
    """A plugin's sandbox that does not isolate the agent (its facts, recorded by the runner as
    `sandbox_isolated`) is marked like `none`; one that isolates is not; a record written before the
    field falls back to the built-in name."""
    record = synthetic_record("a", "A", "gsm8k", 0, 0.5)
    site_open = {**record, "sandbox": "site-chroot", "sandbox_isolated": False}
    site_jail = {**record, "sandbox": "site-jail", "sandbox_isolated": True}
    assert marked_label(ResultRecord.model_validate(site_open)) == "a [unsandboxed]"
    assert marked_label(ResultRecord.model_validate(site_jail)) == "a"
    assert marked_label(ResultRecord.model_validate({**record, "sandbox": "none"})) == "a [unsandboxed]"
    assert marked_label(ResultRecord.model_validate({**record, "sandbox": "bwrap"})) == "a"


def test_the_runner_records_whether_the_sandbox_isolated_from_its_facts() -> None:
    from ptbench.runner.record import _isolated

    assert (_isolated("none"), _isolated("bwrap"), _isolated("apptainer")) == (False, True, True)
    assert _isolated("auto") is True  # auto's facts are those of what it becomes (bwrap)
    assert _isolated("a-sandbox-no-longer-installed") is False  # unknown containment is none
    assert _isolated("unknown") is None  # the agent never ran
