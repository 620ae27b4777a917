"""The solve stage's launch, resolved once: the sandbox first (an unusable `auto` stops the stage
before the gateway reads the agent's key), then the gateway, the cache layer, the journal and the
network, which every run of the stage shares and agent/launch.json records.

Real pieces: a planned trial of an agent behind the trial gateway, the real gateway (in a thread),
cache layer and journal. The one seam: the control runs in pytest's own process, which the gateway
would make non-dumpable for the rest of the session, so that one call is a no-op here."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from ptbench.agents.agent_run import AgentRun
from ptbench.agents.spec import load_agent
from ptbench.core.errors import UserError
from ptbench.plan import plan_campaign
from ptbench.runner.agent_solve import solve_launch
from ptbench.sandbox.auto import bwrap_usable
from ptbench.spec import load_campaign
from ptbench.trial import TrialDir

KEY = "PTB_GW_KEY"
AGENT = f"""
name: gw
command: ["{{{{ python }}}}", "-c", "print('hi')"]
uses_prompt: true
keys: [{KEY}]
upstream: "https://api.example.invalid"
"""


def _trial(tmp_path: Path, monkeypatch, sandbox: str) -> TrialDir:
    (tmp_path / "agents" / "gw").mkdir(parents=True)
    (tmp_path / "agents" / "gw" / "agent.yaml").write_text(AGENT)
    monkeypatch.setenv("PTBENCH_AGENTS_PATH", str(tmp_path / "agents"))
    monkeypatch.setenv(KEY, "sk-gw-canary-0123456789")
    monkeypatch.setattr("ptbench.runner.trial_gateway.make_not_dumpable", lambda: None)
    load_agent.cache_clear()
    campaign = {
        "name": "c",
        "agents": [{"name": "gw", "model": "m1"}],
        "base_models": [{"id": "local/tiny", "path": str(tmp_path), "label": "tiny"}],
        "tasks": [{"name": "arithmetic"}],
        "budget": {"hours": 1, "gpus": 0},
        "sandbox": sandbox,
        "results_dir": str(tmp_path / "results"),
    }
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(campaign))
    trial = plan_campaign(load_campaign(tmp_path / "c.yaml")).trials[0]
    trial.path.mkdir(parents=True, exist_ok=True)
    return trial


def _events(trial: TrialDir) -> list[str]:
    if not trial.events_jsonl.exists():
        return []
    return [json.loads(line)["event"] for line in trial.events_jsonl.read_text().splitlines()]


@pytest.fixture(autouse=True)
def _fresh_caches():
    bwrap_usable.cache_clear()
    yield
    bwrap_usable.cache_clear()
    load_agent.cache_clear()


def test_an_unusable_auto_sandbox_stops_the_stage_before_the_key_is_read(tmp_path: Path, monkeypatch) -> None:
    trial = _trial(tmp_path, monkeypatch, "auto")
    run = AgentRun.resolve(trial)
    monkeypatch.setenv("PATH", str(tmp_path / "no-bwrap-here"))
    with pytest.raises(UserError, match="sandbox auto"):
        with solve_launch(run, provider_url="", rehearsal=False):
            pytest.fail("the stage must not start")
    assert os.environ.get(KEY) == "sk-gw-canary-0123456789"  # the gateway never took it out of the environment
    assert "gateway" not in _events(trial) and "sandbox_view" not in _events(trial)


def test_the_stage_resolves_sandbox_network_gateway_once(tmp_path: Path, monkeypatch) -> None:
    trial = _trial(tmp_path, monkeypatch, "none")  # the control: the same trial with a sandbox that needs nothing
    run = AgentRun.resolve(trial)
    with solve_launch(run, provider_url="", rehearsal=False) as setup:
        assert setup.sandbox == "none" and setup.network == "host"  # no namespace to give without a sandbox
        assert setup.gateway is not None and setup.base_url == setup.gateway.base_url
        assert KEY not in os.environ  # the runner's children no longer inherit the real key
        assert (setup.scratch / "tmp").is_dir() and (setup.scratch / "shm").is_dir()
        record = setup.record()
    assert record["sandbox"] == "none" and record["network"] == "host"
    assert record["journal"] is (setup.journal is not None)
    events = _events(trial)
    assert events.index("gateway") < events.index("sandbox_view") < events.index("gateway_closed"), events


def test_auto_becomes_bwrap_with_the_gateway_as_the_only_network(tmp_path: Path, monkeypatch) -> None:
    if shutil.which("bwrap") is None or not bwrap_usable()[0]:
        pytest.skip("bwrap cannot start a sandbox here")
    trial = _trial(tmp_path, monkeypatch, "auto")
    with solve_launch(AgentRun.resolve(trial), provider_url="", rehearsal=False) as setup:
        assert setup.sandbox == "bwrap" and setup.network == "gateway"  # never `auto` past this point
        assert setup.record()["sandbox"] == "bwrap"
