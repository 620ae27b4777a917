"""mini-swe-agent (the real PyPI package, in its own venv) as a scaffold, in real trials.

Nothing is mocked: `ptbench run` plans the campaign, the local backend starts `ptbench trial run`,
the runner starts the trial's gateway and runs agents/mini-swe-agent/driver.py with the venv's
python in bwrap, holding a trial token only. Upstream is (1) the scripted provider of a rehearsal,
which makes mini-swe-agent run real bash commands in the workspace, end, and be continued with the
time left; (2) a real vLLM server (CPU build) serving a tiny random model, which says nonsense: that
test checks the plumbing of an open-model run (requests reached vLLM through the gateway, a trace
was written), not what the model did.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ptbench.agents import load_agent
from ptbench.agents.launcher import find_executable
from ptbench.core.errors import UserError
from ptbench.core.files import read_jsonl
from ptbench.trial import TrialDir
from tests.support import assert_run_exit, require

CANARY = "sk-vllm-canary-51d0e7a3b9c2"
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


def _require_mini() -> None:
    load_agent.cache_clear()
    try:
        find_executable(load_agent("mini-swe-agent"))
    except UserError as exc:
        require(False, str(exc))
    require(shutil.which("bwrap") is not None, "bwrap is not installed: apt-get install bubblewrap")


def _run(tmp_path: Path, tiny: Path, agent: dict, env: dict[str, str] | None = None, **extra) -> TrialDir:
    data = {
        "name": "mini",
        "agents": [agent],
        "base_models": [{"id": "local/tiny", "path": str(tiny), "label": "tiny"}],
        "tasks": [{"name": "arithmetic", "options": {"digits": 2, "n_test": 20}}],
        "budget": {"hours": 0.1, "gpus": 0, "grace_seconds": 5},
        "results_dir": str(tmp_path / "results"),
        "evaluation": {"engine": "transformers", "limit": 4},
        "sandbox": "bwrap",
        "integrity": {"checks": ["api_usage"]},  # the others need a trained model to say anything
        **extra,
    }
    (tmp_path / "campaign.yaml").write_text(yaml.safe_dump(data))
    out = subprocess.run(
        [sys.executable, "-m", "ptbench", "run", str(tmp_path / "campaign.yaml")],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, **(env or {})},
        cwd=tmp_path,
    )
    print(out.stdout[-3000:])  # what a user sees (pasted into the closing note)
    assert_run_exit(out, tmp_path / "results")
    return TrialDir(next((tmp_path / "results" / "mini").glob("*/trial.json")).parent)


def _no_canary_under(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert CANARY.encode() not in path.read_bytes(), f"the key leaked into {path}"


def _calls(trial: TrialDir) -> list[dict]:
    traj = json.loads((trial.agent_dir / "trajectory.json").read_text())
    return [s["tool_call"] for s in traj["steps"] if s["kind"] == "tool_call"]


@pytest.mark.slow
@pytest.mark.integration
def test_rehearsal_runs_bash_in_the_workspace_and_is_continued(tmp_path: Path, tiny_model: Path) -> None:
    _require_mini()
    script = {
        "turns": [
            {"shell": "printf 'print(6 * 7)\\n' > hello.py && {{ python }} hello.py > answer.txt && cat answer.txt"},
            {"shell": "printf 'token=%.10s\\n' \"$OPENAI_API_KEY\" && pwd"},  # mini runs /bin/sh
            {"shell": "cp -r {{ base_model }} final_model && echo copied"},
            {"shell": SUBMIT},
            {"shell": "cat answer.txt && ls final_model | grep -c json"},  # the continuation, same session
            {"shell": SUBMIT},
        ]
    }
    (tmp_path / "script.yaml").write_text(yaml.safe_dump(script))
    agent = {
        "name": "mini-swe-agent",
        "model": "scripted",
        "options": {"rehearsal": {"script": str(tmp_path / "script.yaml")}, "continue_if_minutes_left": 1},
    }
    # a rehearsal reads no key: the one set here (for `ptbench run`'s check) must reach nothing
    trial = _run(tmp_path, tiny_model, agent, env={"OPENAI_API_KEY": CANARY}, max_continuations=1)
    result = trial.read_result()
    assert result["status"] == "completed" and result["primary_metric"]["n"] == 4, result
    assert result["agent"]["cli_version"] == "2.4.6"
    # real bash ran in the workspace
    assert (trial.workspace / "hello.py").read_text() == "print(6 * 7)\n"
    assert (trial.workspace / "answer.txt").read_text() == "42\n"
    # the parsed trace: every command, its output and exit code, over two runs of one session
    calls = _calls(trial)
    assert [c["name"] for c in calls] == ["bash"] * 6
    assert [c["arguments"]["command"] for c in calls][-2:] == [script["turns"][4]["shell"], SUBMIT]
    assert calls[0]["output"] == "42\n" and calls[2]["output"] == "copied\n"
    assert "token=ptb-trial-" in calls[1]["output"] and str(trial.workspace) in calls[1]["output"]
    assert calls[4]["output"].startswith("42\n")
    assert all(c["status"] == "ok" and c["exit_code"] == 0 for c in calls), calls
    traj = json.loads((trial.agent_dir / "trajectory.json").read_text())
    assert [r["mode"] for r in traj["runs"]] == ["start", "continue"]
    assert traj["usage"]["input_tokens"] > 0 and traj["usage"]["output_tokens"] > 0
    session = json.loads((trial.agent_dir / "session.json").read_text())
    assert session["continuations"] == 1 and session["runs"] == 2 and session["session_id"] == traj["session_id"]
    launch = json.loads((trial.agent_dir / "launch.json").read_text())
    assert f"--resume={session['session_id']}" in launch["argv"] and launch["network"] == "gateway"
    # mini-swe-agent's own trajectory of the session, in the private HOME
    saved = json.loads((trial.home / ".mini-swe-agent" / "sessions" / f"{session['session_id']}.traj.json").read_text())
    assert saved["info"]["exit_status"] == "Submitted" and saved["info"]["mini_version"] == "2.4.6"
    # the scripted provider was reached through the gateway (its key, never the token), by Chat Completions
    requests = read_jsonl(trial.agent_dir / "provider-requests.jsonl")
    assert requests and all(r["path"] == "/v1/chat/completions" for r in requests)
    assert "ptb-trial-" not in json.dumps([r["headers"] for r in requests])
    assert "the time budget is not used up yet" in json.dumps(requests[-1]["body"])
    _no_canary_under(tmp_path / "results")


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.xdist_group("vllm-server")
def test_open_model_on_a_vllm_server_through_the_gateway(
    tmp_path: Path, tiny_model: Path, request: pytest.FixtureRequest
) -> None:
    import importlib.util

    _require_mini()
    require(importlib.util.find_spec("vllm") is not None, "vllm (CPU build) is needed for the vLLM upstream test")
    port = request.getfixturevalue("tiny_vllm_server")  # shared: tests/conftest.py
    agent = {
        "name": "mini-swe-agent",
        "model": "tiny",
        "options": {
            "base_url": f"http://127.0.0.1:{port}",
            "key_env": "VLLM_API_KEY",
            "step_limit": 3,
            "max_attempts": 2,
            "mini_config": {"model": {"model_kwargs": {"max_tokens": 16}}},
        },
    }
    trial = _run(tmp_path, tiny_model, agent, env={"VLLM_API_KEY": CANARY}, max_continuations=0)
    calls = read_jsonl(trial.agent_dir / "calls.jsonl")
    chat = [c for c in calls if c["api"] == "chat"]
    assert chat and all(c["status"] == 200 and c["model"] == "tiny" for c in chat), calls
    assert all(c["input_tokens"] > 100 and c["output_tokens"] > 0 for c in chat)  # counted by vLLM itself
    traj = json.loads((trial.agent_dir / "trajectory.json").read_text())
    assert traj["session_id"] and traj["runs"] and traj["usage"]["input_tokens"] == sum(c["input_tokens"] for c in chat)
    usage = json.loads((trial.agent_dir / "usage.json").read_text())
    assert usage["source"] == "gateway" and usage["calls"] == len(calls)
    launch = json.loads((trial.agent_dir / "launch.json").read_text())
    assert "--model=openai/tiny" in launch["argv"] and launch["credentials"] == "gateway"
    _no_canary_under(tmp_path / "results")


@pytest.mark.integration
def test_an_api_error_fails_the_run_and_is_classified(tmp_path: Path, scripted_provider) -> None:
    """The real package against a provider refusing the key: the driver exits 1, the trace holds the
    error once, the failure is `auth` (not retried); a session that does not exist is not resumed."""
    _require_mini()
    from ptbench.agents.failures import classify
    from ptbench.agents.traces import parse_native_log

    python = find_executable(load_agent("mini-swe-agent"))
    assert python is not None
    driver = Path(__file__).resolve().parents[2] / "agents" / "mini-swe-agent" / "driver.py"
    provider = scripted_provider([{"error": {"kind": "auth"}}, {"message": "unreachable"}])
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "OPENAI_API_KEY": "ptb-trial-x"}
    argv = [str(python), str(driver), "--model=openai/scripted", f"--api-base={provider.base_url}/v1"]
    out = subprocess.run([*argv, "do it"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 1, out.stdout[-2000:] + out.stderr[-2000:]
    traj = parse_native_log(out.stdout, "mini-swe-json", agent="mini-swe-agent")
    assert traj.session_id and traj.runs[-1].is_error and len(traj.errors) == 1, traj.errors
    assert "AuthenticationError" in traj.errors[0]
    failure = classify(traj, out.stdout[-20000:], out.returncode)
    assert failure is not None and failure.kind == "auth" and not failure.retryable
    gone = subprocess.run(
        [*argv, "--resume=nosuchsession", "go on"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert gone.returncode == 2 and "cannot resume session nosuchsession" in gone.stdout


def test_example_campaign_validates_and_names_the_servers_key(tmp_path: Path) -> None:
    """campaigns/mini-swe-agent-vllm.yaml: valid with its key set, refused (exit 2, the variable named) without."""
    campaign = Path(__file__).resolve().parents[2] / "campaigns" / "mini-swe-agent-vllm.yaml"
    env = {k: v for k, v in os.environ.items() if k not in ("VLLM_API_KEY", "OPENAI_API_KEY")}
    run = [sys.executable, "-m", "ptbench", "validate", str(campaign)]
    ok = subprocess.run(run, capture_output=True, text=True, env={**env, "VLLM_API_KEY": "x"}, cwd=tmp_path)
    assert ok.returncode == 0 and "8 trial(s)" in ok.stdout and "backend slurm" in ok.stdout, ok.stdout + ok.stderr
    refused = subprocess.run(run, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert refused.returncode == 2 and "VLLM_API_KEY" in refused.stderr, refused.stderr


def test_scaffold_is_declared_and_its_venv_is_the_only_place_looked(tmp_path: Path, monkeypatch) -> None:
    """The venv's python, never one on PATH: a missing venv names the install command."""
    load_agent.cache_clear()
    spec = load_agent("mini-swe-agent")
    assert spec.uses_prompt and spec.behind_gateway and spec.trace_format == "mini-swe-json"
    assert spec.package == f"mini-swe-agent=={spec.version}" and spec.venv == "mini-swe-agent"
    # scripts/install.sh takes the pin from here (python -m ptbench.agents.pins pip), not a copy of it
    from ptbench.agents.pins import pins

    assert ("mini-swe-agent", spec.package, "python") in pins("pip")
    monkeypatch.setenv("PTBENCH_VENVS_DIR", str(tmp_path))
    with pytest.raises(UserError, match="scripts/install.sh"):
        find_executable(spec)
    (tmp_path / "mini-swe-agent" / "bin").mkdir(parents=True)
    (tmp_path / "mini-swe-agent" / "bin" / "python").write_text("")
    assert find_executable(spec) == str(tmp_path / "mini-swe-agent" / "bin" / "python")
