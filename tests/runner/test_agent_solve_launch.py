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
    monkeypatch.setattr("ptbench.launch.trial_gateway.make_not_dumpable", lambda: None)
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


CAPPED_AGENT = """
name: capped
command: ["{{ python }}", "-c", "@SCRIPT@"]
uses_prompt: true
keys: [PTB_CAPPED_KEY]
upstream: "{{ options.base_url }}"
env:
  GW_URL: "{{ base_url }}"
"""
# Two model calls through the trial gateway with the trial token; the second is over the cap.
CALLS = (
    "import json, os, urllib.request as u\n"
    "for i in range(2):\n"
    "    body = json.dumps({'model': 'gpt-5-mini', 'messages': [{'role': 'user', 'content': 'hi'}]}).encode()\n"
    "    req = u.Request(os.environ['GW_URL'] + '/v1/chat/completions', data=body, headers={\n"
    "        'authorization': 'Bearer ' + os.environ['PTB_CAPPED_KEY'], 'content-type': 'application/json'})\n"
    "    try:\n"
    "        print('CALL', u.urlopen(req, timeout=30).status, flush=True)\n"
    "    except Exception as exc:\n"
    "        print('CALL', exc, flush=True)\n"
)


@pytest.mark.slow
@pytest.mark.integration
def test_a_spent_cost_cap_is_the_runs_failure_through_the_real_stage(tmp_path: Path, scripted_provider) -> None:
    """The whole solve stage (`ptbench run`): the run's failure is the gateway's cost cap, worded from
    the gateway's own totals; launch.json records the stage's resolved launch."""
    import subprocess
    import sys

    from tests.support import assert_run_exit

    provider = scripted_provider([{"message": "first"}, {"message": "never sent: the cap was spent"}])
    agents = tmp_path / "agents"
    (agents / "capped").mkdir(parents=True)
    script = CALLS.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    (agents / "capped" / "agent.yaml").write_text(CAPPED_AGENT.replace("@SCRIPT@", script))
    campaign = {
        "name": "cap",
        "agents": [
            {
                "name": "capped",
                "model": "gpt-5-mini",
                "options": {"base_url": provider.base_url, "cost_cap_usd": 1e-9},
            }
        ],
        "base_models": [{"id": "local/tiny", "path": str(tmp_path), "label": "tiny"}],
        "tasks": [{"name": "arithmetic", "options": {"n_test": 4}}],
        "budget": {"hours": 0.1, "gpus": 0, "grace_seconds": 5},
        "max_continuations": 0,
        "sandbox": "none",
        "results_dir": str(tmp_path / "results"),
    }
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(campaign))
    env = {**os.environ, "PTBENCH_AGENTS_PATH": str(agents), "PTB_CAPPED_KEY": "sk-capped-canary-55aa01"}
    out = subprocess.run(
        [sys.executable, "-m", "ptbench", "run", str(tmp_path / "c.yaml")],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=tmp_path,
    )
    assert_run_exit(out, tmp_path / "results")
    (trial_json,) = (tmp_path / "results" / "cap").glob("*/trial.json")
    trial = TrialDir(trial_json.parent)
    log = (trial.agent_dir / "native.log").read_text()
    assert "CALL 200" in log and "CALL HTTP Error 403" in log, log[-2000:]
    failure = json.loads((trial.agent_dir / "failure.json").read_text())
    assert failure["kind"] == "cost_cap", failure
    assert "the trial's cost cap of $1e-09 is spent" in failure["message"], failure
    launch = json.loads((trial.agent_dir / "launch.json").read_text())
    assert launch["sandbox"] == "none" and launch["network"] == "host" and "journal" in launch, launch
    assert "sk-capped-canary-55aa01" not in log and "sk-capped-canary-55aa01" not in json.dumps(launch)
