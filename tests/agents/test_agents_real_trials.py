"""Real trials of the four real CLIs on the local backend, driven by the scripted provider.

Nothing is mocked: `ptbench run` plans the campaign, the local backend starts `ptbench trial run`,
the runner launches the real CLI (installed from npm at its pinned version) in its scoped
environment, the scripted model makes it write and run a tiny TRL SFT script that saves
final_model/, and the harness evaluates that model. Every scaffold gets a canary key, which must
appear nowhere under the campaign's directory.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jinja2
import psutil
import pytest
import yaml

from ptbench.agents import load_agent
from ptbench.agents.launcher import npm_bin_dirs
from ptbench.trial import TrialDir
from tests.support import require

MODELS = {
    "claude-code": "claude-sonnet-4-5",
    "codex": "gpt-5-codex",
    "gemini-cli": "gemini-2.5-pro",
    "opencode": "scripted",
}
CANARIES = {
    "ANTHROPIC_API_KEY": "sk-ant-canary-7c1e55d09b2a",
    "OPENAI_API_KEY": "sk-oai-canary-4f2b8e913d7c",
    "GEMINI_API_KEY": "gem-canary-9a3d61c07e54",
}
OWN_KEY = {
    "claude-code": "ANTHROPIC_API_KEY",
    "codex": "OPENAI_API_KEY",
    "gemini-cli": "GEMINI_API_KEY",
    "opencode": "OPENAI_API_KEY",
}
ENV_NAMES_CMD = "env | grep -oE '^[A-Z_]*(API_KEY|AUTH_TOKEN)' | sort | tr '\\n' ' '; echo"


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    from ptbench.demo import make_tiny_model

    return Path(make_tiny_model(tmp_path_factory.mktemp("tiny") / "tiny-llama"))


def _require_clis(names) -> None:
    for name in names:
        spec = load_agent(name)
        found = any((d / spec.executable).exists() for d in npm_bin_dirs()) or shutil.which(spec.executable)
        require(bool(found), f"{name}: the {spec.executable} CLI is not installed: {spec.install_hint}")


def _sft_script(tiny: Path) -> dict:
    text = (
        Path(__import__("ptbench.agents", fromlist=["x"]).__file__).parent / "templates" / "rehearsal_script.yaml.j2"
    ).read_text()
    data = yaml.safe_load(jinja2.Template(text).render(python=sys.executable, base_model=str(tiny), steps=3))
    data["turns"].insert(0, {"shell": ENV_NAMES_CMD})
    return data


def _campaign(tmp_path: Path, tiny: Path, agents: list[dict], **extra) -> Path:
    data = {
        "name": "real",
        "agents": agents,
        "base_models": [{"id": "local/tiny", "path": str(tiny), "label": "tiny"}],
        "tasks": [{"name": "arithmetic", "options": {"digits": 2, "n_test": 20}}],
        "budget": {"hours": 0.1, "gpus": 0, "grace_seconds": 5},
        "results_dir": str(tmp_path / "results"),
        "parallelism": len(agents),
        "evaluation": {"engine": "transformers", "limit": 10},
        # The checks that read what the CLI left (its trajectory, its home and state folders). Nothing
        # here asserts a verdict, and memorization and model_identity read only final_model and the
        # base, whatever the scaffold: they run on real trials in tests/runner/test_runner_paper_campaign.py.
        # Left out, each trial starts two fewer check processes (each imports torch and loads models);
        # the same CLIs run and the same assertions hold.
        "integrity": {"checks": ["contamination", "api_usage"]},
        **extra,
    }
    path = tmp_path / "campaign.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _ptbench(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ptbench", *args],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )


def _assert_no_value_under(root: Path, values) -> None:
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            for v in values:
                assert v.encode() not in data, f"secret leaked into {path}"


@pytest.mark.slow
@pytest.mark.integration
def test_four_scaffolds_train_and_are_evaluated(tmp_path: Path, tiny_model: Path, scripted_provider) -> None:
    _require_clis(MODELS)
    provider = scripted_provider(_sft_script(tiny_model))
    agents = [{"name": n, "model": m, "options": {"base_url": provider.base_url}} for n, m in MODELS.items()]
    campaign = _campaign(tmp_path, tiny_model, agents, sandbox="bwrap" if shutil.which("bwrap") else "none")
    out = _ptbench("run", str(campaign), env=CANARIES, cwd=tmp_path)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    cdir = tmp_path / "results" / "real"
    for trial_path in sorted(p.parent for p in cdir.glob("*/trial.json")):
        trial = TrialDir(trial_path)
        name = trial.spec.agent.name
        result = trial.read_result()
        assert result and result["status"] == "completed", (
            name,
            result,
            (trial.agent_dir / "native.log").read_text()[-2000:],
        )
        assert result["primary_metric"]["name"] == "accuracy" and result["primary_metric"]["n"] == 10
        assert result["agent"]["cli_version"] == load_agent(name).version
        assert result["usage"]["input_tokens"] > 0 and result["usage"]["output_tokens"] > 0
        traj = json.loads((trial.agent_dir / "trajectory.json").read_text())
        calls = [s["tool_call"] for s in traj["steps"] if s["kind"] == "tool_call"]
        assert len(calls) == 4, (name, calls)
        assert calls[0]["output"].split() == [OWN_KEY[name]], (name, calls[0])  # the agent saw its own key only
        assert "Remaining time" in calls[1]["output"]
        assert "rehearsal_sft.py" in json.dumps(calls[2]["arguments"])
        assert "saved final_model" in calls[3]["output"] and all(c["status"] == "ok" for c in calls)
        assert traj["final_message"] == "Rehearsal done: final_model/ is saved."
        assert traj["session_id"]
    _assert_no_value_under(cdir, CANARIES.values())


@pytest.mark.slow
@pytest.mark.integration
def test_overrun_is_stopped_and_recorded_timed_out(tmp_path: Path, tiny_model: Path, scripted_provider) -> None:
    _require_clis(["claude-code"])
    provider = scripted_provider(
        [
            {"shell": f"cp -r {tiny_model} final_model && echo copied"},
            # (Claude Code refuses a plain `sleep 900`; a training run that overruns looks like this)
            {"shell": f"{sys.executable} -c 'import time; time.sleep(900)'", "timeout_s": 1000},
            {"message": "unreachable"},
        ]
    )
    agents = [{"name": "claude-code", "model": "claude-sonnet-4-5", "options": {"base_url": provider.base_url}}]
    # 14.4 s: the model is copied ~1.6 s after the agent starts (measured under load 5)
    campaign = _campaign(tmp_path, tiny_model, agents, budget={"hours": 0.004, "gpus": 0, "grace_seconds": 2})
    out = _ptbench("run", str(campaign), env=CANARIES, cwd=tmp_path)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    trial = TrialDir(next((tmp_path / "results" / "real").glob("*/trial.json")).parent)
    result = trial.read_result()
    assert result["status"] == "timed_out" and result["failure"]["kind"] == "timeout"
    assert result["primary_metric"] is not None  # the model saved before the deadline was evaluated
    events = [json.loads(line)["event"] for line in trial.events_jsonl.read_text().splitlines()]
    assert "deadline" in events and "terminated" in events
    for p in psutil.process_iter():
        try:
            assert p.environ().get("PTBENCH_TRIAL_DIR") != str(trial.path), f"process {p.pid} survived the deadline"
        except psutil.Error:
            pass
    _assert_no_value_under(trial.path, CANARIES.values())


@pytest.mark.slow
@pytest.mark.integration
def test_early_exit_is_continued_with_the_time_left(tmp_path: Path, tiny_model: Path, scripted_provider) -> None:
    _require_clis(["gemini-cli"])
    provider = scripted_provider(
        [
            {"message": "I stop here."},
            {"shell": f"cp -r {tiny_model} final_model && echo copied"},
            {"message": "Now really done."},
        ]
    )
    agents = [
        {
            "name": "gemini-cli",
            "model": "gemini-2.5-pro",
            "options": {"base_url": provider.base_url, "continue_if_minutes_left": 1},
        }
    ]
    campaign = _campaign(tmp_path, tiny_model, agents, max_continuations=1)
    out = _ptbench("run", str(campaign), env=CANARIES, cwd=tmp_path)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    trial = TrialDir(next((tmp_path / "results" / "real").glob("*/trial.json")).parent)
    assert trial.read_result()["status"] == "completed"
    session = json.loads((trial.agent_dir / "session.json").read_text())
    assert session["continuations"] == 1 and session["runs"] == 2
    traj = json.loads((trial.agent_dir / "trajectory.json").read_text())
    assert [r["mode"] for r in traj["runs"]] == ["start", "continue"] and traj["final_message"] == "Now really done."
    asked = json.dumps([r["body"] for r in provider.requests])
    assert "the time budget is not used up yet" in asked and "remain" in asked
    launch = json.loads((trial.agent_dir / "launch.json").read_text())
    assert "--resume" in launch["argv"] and session["session_id"] in launch["argv"]


@pytest.mark.slow
@pytest.mark.integration
def test_rehearse_runs_real_cli_without_keys(tmp_path: Path, tiny_model: Path) -> None:
    _require_clis(["codex"])
    campaign = _campaign(tmp_path, tiny_model, [{"name": "codex", "model": "gpt-5-codex"}])
    env = {k: "" for k in CANARIES}
    refused = _ptbench("validate", str(campaign), env=env, cwd=tmp_path)
    assert refused.returncode == 2 and "OPENAI_API_KEY" in refused.stderr
    out = _ptbench("run", str(campaign), "--rehearse", env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    trial = TrialDir(next((tmp_path / "results" / "real-rehearsal").glob("*/trial.json")).parent)
    result = trial.read_result()
    assert result["status"] == "completed" and result["primary_metric"]["n"] == 10
    requests = [json.loads(line) for line in (trial.agent_dir / "provider-requests.jsonl").read_text().splitlines()]
    assert requests and all(r["path"] == "/v1/responses" for r in requests)
    assert not (tmp_path / "results" / "real").exists()  # a rehearsal never mixes with the real campaign
