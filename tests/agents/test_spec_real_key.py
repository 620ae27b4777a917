"""Fail closed: an agent whose keys no gateway can hold (no `upstream:`) is refused unless its
agent.yaml says `allow_real_key: true`; then the result records it and tables mark the row.

Real CLI (`ptbench validate`, `plan`, `trial run`) on a custom agent found through
PTBENCH_AGENTS_PATH. (The opt-in's full run, result.json and mark: tests/runner/test_pipeline_stop_signals.py.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ptbench.cli import main
from ptbench.plan import plan_campaign
from ptbench.results.policy import marked_label
from ptbench.results.schema import ResultRecord
from ptbench.spec import load_campaign
from tests.conftest import ptbench
from tests.results.synthetic import record as synthetic_record

AGENT = """\
name: keyed
keys: [PTB_KEYED_API_KEY]
command: ["bash", "-c", "echo $PTB_KEYED_API_KEY > leaked.txt"]
"""

CAMPAIGN = """\
name: rk
agents: [{name: keyed}]
base_models: [{id: local/tiny, path: "MODEL", label: tiny}]
tasks: [arithmetic]
budget: {hours: 1, gpus: 0}
results_dir: "RESULTS"
"""


@pytest.fixture
def campaign(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / "agents" / "keyed").mkdir(parents=True)
    (tmp_path / "agents" / "keyed" / "agent.yaml").write_text(AGENT)
    monkeypatch.setenv("PTBENCH_AGENTS_PATH", str(tmp_path / "agents"))
    monkeypatch.setenv("PTB_KEYED_API_KEY", "sk-keyed-canary-77aa")
    path = tmp_path / "c.yaml"
    (tmp_path / "tiny").mkdir()  # validate looks for a local base model's path
    path.write_text(CAMPAIGN.replace("RESULTS", str(tmp_path / "results")).replace("MODEL", str(tmp_path / "tiny")))
    return path


@pytest.mark.parametrize("command", ["validate", "plan"])
def test_an_agent_that_would_get_a_real_key_is_refused(campaign: Path, tmp_path: Path, capsys, command: str) -> None:
    with pytest.raises(SystemExit) as exc:
        main([command, str(campaign)])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2
    assert len(err.splitlines()) == 1 and err.startswith("error: "), err
    for needle in ("keyed/agent.yaml", "PTB_KEYED_API_KEY", "upstream:", "allow_real_key: true"):
        assert needle in err, (needle, err)
    assert not (tmp_path / "results").exists()


def test_the_runner_refuses_it_too(campaign: Path, tmp_path: Path) -> None:
    """A trial planned without validation (or an agent.yaml edited after planning): the agent never starts."""
    trial = plan_campaign(load_campaign(campaign)).trials[0].path
    out = ptbench("trial", "run", str(trial), cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert "allow_real_key" in out.stderr
    assert not (trial / "workspace" / "leaked.txt").exists() and not (trial / "agent" / "launch.json").exists()
    events = [json.loads(line)["event"] for line in (trial / "events.jsonl").read_text().splitlines()]
    assert "agent_started" not in events


def test_the_opt_in_is_accepted_and_marked(campaign: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agents" / "keyed" / "agent.yaml"
    agent.write_text(AGENT + "allow_real_key: true\n")
    out = ptbench("validate", str(campaign), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    record = synthetic_record("keyed", "A", "gsm8k", 0, 0.5)
    assert (
        marked_label(ResultRecord.model_validate({**record, "agent_credentials": "real_key", "sandbox": "none"}))
        == "keyed [unsandboxed] [real key]"
    )
    assert (
        marked_label(ResultRecord.model_validate({**record, "agent_credentials": "gateway", "sandbox": "bwrap"}))
        == "keyed"
    )
