"""The scaffolds as data: loading, variants, scoped keys, login files, and the bad-input errors."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest
import yaml

from ptbench.agents import available_agents, load_agent
from ptbench.agents.agent_run import AgentRun
from ptbench.agents.launcher import build_launch, find_executable
from ptbench.core.errors import UserError
from ptbench.plan import plan_campaign
from ptbench.spec import load_campaign

LLM_AGENTS = ["claude-code", "codex", "gemini-cli", "opencode"]
KEYS = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "ZAI_API_KEY",
    "DASHSCOPE_API_KEY",
    "CLAUDE_CODE_OAUTH_TOKEN",
)


@pytest.fixture(autouse=True)
def _fresh_agents(monkeypatch):
    load_agent.cache_clear()
    for k in KEYS:
        monkeypatch.delenv(k, raising=False)
    yield
    load_agent.cache_clear()


def _campaign(tmp_path: Path, agents: list[dict], **extra) -> Path:
    data = {
        "name": "c",
        "agents": agents,
        "base_models": [{"id": "local/tiny", "path": str(tmp_path), "label": "tiny"}],
        "tasks": [{"name": "arithmetic"}],
        "budget": {"hours": 1, "gpus": 0},
        "results_dir": str(tmp_path / "results"),
        **extra,
    }
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize("name", LLM_AGENTS)
def test_scaffold_declares_everything(name: str) -> None:
    spec = load_agent(name)
    assert spec.uses_prompt and spec.executable and spec.trace_format != "text"
    assert spec.package and spec.version and spec.package.endswith("@" + spec.version)
    assert spec.continue_command and any("session_id" in a for a in spec.continue_command)
    assert any("prompt" in a for a in spec.command)


def test_variants_are_data() -> None:
    assert {
        "claude-code-glm",
        "claude-code-qwen",
        "claude-code-subscription",
        "codex-high",
        "codex-subscription",
        "gemini-cli-login",
    } <= set(available_agents())
    glm = load_agent("claude-code-glm")
    assert glm.keys == ["ZAI_API_KEY"] and glm.env["IS_SANDBOX"] == "1" and "ANTHROPIC_AUTH_TOKEN" in glm.env
    assert glm.command == load_agent("claude-code").command
    assert load_agent("codex-high").options["reasoning_effort"] == "high"
    assert load_agent("codex-subscription").auth_files == {".codex/auth.json": "~/.codex/auth.json"}


def test_agent_gets_only_its_own_key(tmp_path: Path, monkeypatch) -> None:
    for k in KEYS:
        monkeypatch.setenv(k, f"{k.lower()}-canary-value")
    monkeypatch.setenv("SOME_OTHER_SECRET", "x" * 20)
    path = _campaign(
        tmp_path,
        [
            {"name": "claude-code", "model": "m"},
            {"name": "claude-code-glm", "model": "glm-4.6"},
            {"name": "codex", "model": "gpt-5", "options": {"reasoning_effort": "high"}},
        ],
    )
    plan = plan_campaign(load_campaign(path))
    launches = {t.spec.agent.name: build_launch(AgentRun.resolve(t), prompt="P") for t in plan.trials}
    secret_env = {
        n: {k for k in KEYS + ("SOME_OTHER_SECRET", "ANTHROPIC_AUTH_TOKEN") if k in launch.env}
        for n, launch in launches.items()
    }
    assert secret_env == {
        "claude-code": {"ANTHROPIC_API_KEY"},
        "claude-code-glm": {"ZAI_API_KEY", "ANTHROPIC_AUTH_TOKEN"},
        "codex": {"OPENAI_API_KEY"},
    }
    glm = launches["claude-code-glm"]
    assert (
        glm.env["ANTHROPIC_AUTH_TOKEN"] == "zai_api_key-canary-value"
        and glm.env["ANTHROPIC_BASE_URL"] == "https://api.z.ai/api/anthropic"
    )
    assert set(glm.secrets) == {"ZAI_API_KEY", "ANTHROPIC_AUTH_TOKEN"}
    assert "--config=model_reasoning_effort=high" in launches["codex"].argv
    assert not any("model_provider" in a for a in launches["codex"].argv)  # no base_url: the built-in provider
    for launch in launches.values():
        assert launch.env["HOME"].endswith("/home") and launch.argv[-1] == "P"


def test_rehearsal_reads_no_real_key(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-key-must-not-be-used")
    plan = plan_campaign(load_campaign(_campaign(tmp_path, [{"name": "codex", "model": "gpt-5"}])))
    launch = build_launch(
        AgentRun.resolve(plan.trials[0], rehearsal_url="http://127.0.0.1:1234"),
        prompt="P",
        base_url="http://127.0.0.1:1234",
    )
    assert launch.env["OPENAI_API_KEY"] != "sk-real-key-must-not-be-used"
    assert any('base_url="http://127.0.0.1:1234/v1"' in a for a in launch.argv)


def test_subscription_login_copied_private_and_redacted(tmp_path: Path, monkeypatch) -> None:
    fake_home = tmp_path / "userhome"
    (fake_home / ".codex").mkdir(parents=True)
    token = "eyJhbGciOiJSUzI1NiJ9.canary-access-token-value"
    (fake_home / ".codex" / "auth.json").write_text(
        json.dumps({"tokens": {"access_token": token}, "last_refresh": "2025"})
    )
    monkeypatch.setenv("HOME", str(fake_home))
    path = _campaign(tmp_path, [{"name": "codex-subscription", "model": "gpt-5"}])
    load_campaign(path)
    trial = plan_campaign(load_campaign(path)).trials[0]
    launch = build_launch(AgentRun.resolve(trial), prompt="P")
    copied = trial.home / ".codex" / "auth.json"
    assert launch.copied_auth_files == [copied]
    assert stat.S_IMODE(copied.stat().st_mode) == 0o600
    assert token in launch.secrets.values() and "OPENAI_API_KEY" not in launch.env


def test_validate_refuses_missing_key_naming_the_variable(tmp_path: Path, capsys) -> None:
    from ptbench.cli import main

    path = _campaign(tmp_path, [{"name": "gemini-cli", "model": "gemini-2.5-pro"}])
    with pytest.raises(SystemExit) as exc:
        main(["validate", str(path)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "GEMINI_API_KEY" in err and "--rehearse" in err
    with pytest.raises(SystemExit) as exc:
        main(["run", str(path)])
    assert exc.value.code == 2 and not (tmp_path / "results").exists()  # refused before planning


def test_missing_cli_names_the_install_command(tmp_path: Path, monkeypatch) -> None:
    folder = tmp_path / "agents" / "ghost"
    folder.mkdir(parents=True)
    (folder / "agent.yaml").write_text(
        yaml.safe_dump(
            {
                "name": "ghost",
                "package": "ghost-cli@1.2.3",
                "version": "1.2.3",
                "executable": "ptbench-ghost-cli",
                "uses_prompt": True,
                "command": ["{{ executable }}", "{{ prompt }}"],
            }
        )
    )
    monkeypatch.setenv("PTBENCH_AGENTS_PATH", str(tmp_path / "agents"))
    with pytest.raises(UserError) as exc:
        find_executable(load_agent("ghost"))
    assert "npm install --prefix .cache/npm --no-audit --no-fund ghost-cli@1.2.3" in str(exc.value)
    from ptbench.agents.checks import agent_problems

    problems = agent_problems(load_campaign(_campaign(tmp_path, [{"name": "ghost"}])))
    assert any("ghost-cli@1.2.3" in p for p in problems)


@pytest.mark.parametrize(
    "body, expected",
    [
        ({"name": "bad", "command": ["x"], "trace_format": "xml"}, ["trace_format", "agent.yaml:"]),
        # what the installer and integrity read from agent.yaml is checked when it is loaded
        (
            {"name": "bad", "command": ["x"], "trace_format": "claude-stream-jsn"},
            ["trace_format: unknown trace format 'claude-stream-jsn'", "did you mean 'claude-stream-json'?"],
        ),
        ({"name": "bad", "command": ["x"], "package": "ghost-cli"}, ["'ghost-cli' is not pinned", "name@version"]),
        ({"name": "bad", "command": ["x"], "package": "ghost@1.0", "venv": "g"}, ["not pinned", "name==version"]),
        ({"name": "bad", "command": ["x"], "state_folders": [".."]}, ["state_folders", "inside HOME"]),
        ({"name": "bad", "command": ["x"], "state_folders": ["/root/.x"]}, ["state_folders", "inside HOME"]),
        ({"name": "bad", "command": ["x"], "failure_patterns": {"oops": ["x"]}}, ["failure kind 'oops' is not one"]),
        ({"name": "bad", "command": ["x"], "failure_patterns": {"auth": ["("]}}, ["failure_patterns", "not a regex"]),
        ({"name": "bad", "command": ["x"], "kees": ["A"]}, ["unknown key 'kees'", "did you mean 'keys'"]),
        ({"name": "bad"}, ["missing required field 'command'", "add it"]),
        ({"name": "bad", "command": ["x"], "extends": "bad"}, ["extends", "cycle"]),
    ],
)
def test_malformed_agent_yaml_names_file_field_and_fix(tmp_path: Path, monkeypatch, body, expected) -> None:
    folder = tmp_path / "agents" / "bad"
    folder.mkdir(parents=True)
    (folder / "agent.yaml").write_text(yaml.safe_dump(body, sort_keys=False))
    monkeypatch.setenv("PTBENCH_AGENTS_PATH", str(tmp_path / "agents"))
    with pytest.raises(UserError) as exc:
        load_agent("bad")
    msg = str(exc.value)
    assert str(folder / "agent.yaml") in msg
    for part in expected:
        assert part in msg, msg


def test_prompt_has_rules_and_task_context(tmp_path: Path) -> None:
    from ptbench.runner.workspace import prepare_workspace

    trial = plan_campaign(load_campaign(_campaign(tmp_path, [{"name": "reference"}]))).trials[0]
    prepare_workspace(trial, python=sys.executable)
    text = trial.prompt_txt.read_text()
    for part in ("timer.sh", "final_model/", "test data", "instruct version", "a+b=", str(trial.workspace)):
        assert part in text, part
    assert os.environ.get("ANTHROPIC_API_KEY") is None


def test_reference_agent_trains_with_the_runners_kernel_choice(tmp_path: Path, monkeypatch) -> None:
    """ATEN_CPU_CAPABILITY / ONEDNN_MAX_CPU_ISA (e.g. AVX2 kernels on an AVX-512 CPU, to reproduce a table
    made on another CPU) reach the agent that trains, not only the runner that evaluates."""
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "avx2")
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    plan = plan_campaign(load_campaign(_campaign(tmp_path, [{"name": "reference"}])))
    env = build_launch(AgentRun.resolve(plan.trials[0]), prompt="P").env
    assert env["ATEN_CPU_CAPABILITY"] == "avx2" and env["ONEDNN_MAX_CPU_ISA"] == "AVX2"
