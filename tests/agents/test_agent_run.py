"""One agent launch: `AgentRun.resolve` builds the solve's agent once (options merged, upstream, keys,
allow-list, resume record); `agent/session.json` is typed and versioned."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

import ptbench
from ptbench.agents.agent_run import AgentRun
from ptbench.agents.launcher import build_launch
from ptbench.agents.session import SESSION_SCHEMA, AgentSession, load_session
from ptbench.agents.spec import load_agent
from ptbench.core.errors import UserError
from ptbench.plan import plan_campaign
from ptbench.spec import load_campaign

AGENT = """
name: gw
command: ["{{ python }}", "-c", "print('{{ model }} {{ options.effort }} {{ session_id }}')"]
continue_command: ["{{ python }}", "-c", "print('resume {{ session_id }}')"]
uses_prompt: true
keys: [PTB_GW_KEY]
upstream: "{{ options.base_url or 'https://api.example.invalid' }}"
gateway_models:
  "{{ model }}": "{{ model | upper }}"
options:
  effort: low
  small_model: ""
"""


@pytest.fixture
def trial(tmp_path: Path, monkeypatch):
    (tmp_path / "agents" / "gw").mkdir(parents=True)
    (tmp_path / "agents" / "gw" / "agent.yaml").write_text(AGENT)
    monkeypatch.setenv("PTBENCH_AGENTS_PATH", str(tmp_path / "agents"))
    monkeypatch.setenv("PTB_GW_KEY", "sk-gw-canary-0123456789")
    load_agent.cache_clear()
    campaign = {
        "name": "c",
        "agents": [{"name": "gw", "model": "m1", "options": {"effort": "high", "allowed_models": ["m2"]}}],
        "base_models": [{"id": "local/tiny", "path": str(tmp_path), "label": "tiny"}],
        "tasks": [{"name": "arithmetic"}],
        "budget": {"hours": 1, "gpus": 0},
        "sandbox": "none",
        "results_dir": str(tmp_path / "results"),
    }
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(campaign))
    yield plan_campaign(load_campaign(tmp_path / "c.yaml")).trials[0]
    load_agent.cache_clear()


def test_resolved_once_with_everything_the_gateway_and_the_launch_need(trial) -> None:
    run = AgentRun.resolve(trial)
    assert run.options["effort"] == "high" and run.options["base_url"] == ""  # campaign over agent.yaml over common
    assert run.upstream == "https://api.example.invalid" and run.keys == ["PTB_GW_KEY"]
    assert run.allowed_models == {"m1": "M1", "m2": "m2"} and run.credentials == "gateway"
    assert run.session == AgentSession() and run.credential_problem() is None
    launch = build_launch(run, base_url="http://127.0.0.1:9", gateway_token="trial-token")
    assert launch.env["PTB_GW_KEY"] == "trial-token" and launch.argv[-1] == "print('m1 high ')"


def test_the_resume_record_drives_the_continue_command_and_round_trips(trial) -> None:
    run = AgentRun.resolve(trial)
    run.session.session_id, run.session.runs = "sess-42", 1
    trial.agent_dir.mkdir(parents=True, exist_ok=True)  # the prepare stage makes it
    run.save_session()
    again = AgentRun.resolve(trial)
    assert again.session.session_id == "sess-42" and again.session.schema_version == SESSION_SCHEMA
    launch = build_launch(again, resume=True, gateway_token="t")
    assert launch.argv[-1] == "print('resume sess-42')"


def test_a_session_written_by_a_newer_ptbench_is_refused_with_one_line(trial) -> None:
    trial.agent_dir.mkdir(parents=True, exist_ok=True)
    (trial.agent_dir / "session.json").write_text(json.dumps({"schema_version": SESSION_SCHEMA + 1}))
    with pytest.raises(UserError) as exc:
        load_session(trial.agent_dir)
    assert "\n" not in str(exc.value) and "newer" in str(exc.value)


def test_a_session_from_before_versioning_reads_as_version_1(trial) -> None:
    trial.agent_dir.mkdir(parents=True, exist_ok=True)
    (trial.agent_dir / "session.json").write_text(json.dumps({"session_id": "s", "continuations": 2, "runs": 3}))
    assert load_session(trial.agent_dir) == AgentSession(session_id="s", continuations=2, runs=3)


def test_agent_options_are_merged_in_one_place() -> None:
    """No module merges an agent's options inline: `agents.options.merged_options` is the one merge."""
    src = Path(ptbench.__file__).parent
    inline = re.compile(r"\*\*\s*spec\.options\s*,|\*\*\s*\w+\.spec\.agent\.options|\*\*\s*ref\.options")
    offenders = [
        f"{p.relative_to(src)}:{i}"
        for p in src.rglob("*.py")
        if p.name != "options.py"
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if inline.search(line)
    ]
    assert offenders == []


def test_keys_come_from_the_environment_first_then_dotenv(tmp_path: Path, monkeypatch) -> None:
    from ptbench.agents.launcher import read_secrets

    (tmp_path / ".env").write_text(
        "# a comment\n"
        "export A_KEY='sk-a-quoted'\n"
        'B_KEY="sk-b" # trailing comment\n'
        "C_KEY=\n"
        "D_KEY=sk-d-from-file\n"
        "OTHER=not-asked-for\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("D_KEY", "sk-d-from-env")
    for name in ("A_KEY", "B_KEY", "C_KEY"):
        monkeypatch.delenv(name, raising=False)
    found = read_secrets(["A_KEY", "B_KEY", "C_KEY", "D_KEY"])
    assert found == {"A_KEY": "sk-a-quoted", "B_KEY": "sk-b", "D_KEY": "sk-d-from-env"}
