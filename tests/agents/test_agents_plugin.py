"""An agent CLI from a third-party package (the toy plugin's `toy-copy`, tests/plugins/ptbench-toy):
its agent folder ships in the package and is registered from it; agent.yaml names its trace format
(parsed by the parser the package registered under that name), its state folders, its pinned
package (what `python -m ptbench.agents.pins` gives scripts/install.sh) and its failure patterns.
(Its real run through a campaign: tests/integrity/test_checks_plugin.py.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import install_plugin_package

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def toy_env(tmp_path_factory) -> dict[str, str]:
    return install_plugin_package(tmp_path_factory.mktemp("toy") / "site")


def _py(env: dict[str, str], code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_the_plugin_agent_is_registered_with_its_facts(toy_env) -> None:
    facts = json.loads(
        _py(
            toy_env,
            "import json\nfrom ptbench.agents import load_agent, available_agents\n"
            "s = load_agent('toy-copy')\n"
            "print(json.dumps({'listed': 'toy-copy' in available_agents(), 'pin': s.pin, "
            "'state': s.state_folders, 'format': s.trace_format}))",
        )
    )
    assert facts == {"listed": True, "pin": ["npm", "ptbench-toy-cli@0.1.0"], "state": [".toy"], "format": "toy-lines"}
    from ptbench.agents import available_agents

    assert "toy-copy" not in available_agents()  # the suite's own interpreter never saw it


def test_pins_are_read_from_agent_yaml_plugins_included(toy_env) -> None:
    def pins(kind: str, env: dict[str, str] | None = None) -> list[str]:
        out = subprocess.run(
            [sys.executable, "-m", "ptbench.agents.pins", kind], env=env, capture_output=True, text=True, timeout=120
        )
        assert out.returncode == 0, out.stderr
        return out.stdout.splitlines()

    npm = pins("npm")
    # Each shipped npm CLI once (variants share their parent's pin), as its agent.yaml says.
    import yaml

    for name in ("claude-code", "codex", "gemini-cli", "opencode"):
        agent = yaml.safe_load((ROOT / "agents" / name / "agent.yaml").read_text())
        assert npm.count(f"{agent['package']} {agent['executable']}") == 1, (name, npm)
    assert len(npm) == 4
    mini = yaml.safe_load((ROOT / "agents" / "mini-swe-agent" / "agent.yaml").read_text())
    assert pins("pip") == [f"mini-swe-agent {mini['package']} python"]
    assert pins("npm", toy_env) == [*npm, "ptbench-toy-cli@0.1.0 bash"]
    # scripts/install.sh repeats no pin: it asks the module.
    script = (ROOT / "scripts" / "install.sh").read_text()
    assert "ptbench.agents.pins" in script
    for line in npm + pins("pip"):
        pkg = line.split()[-2]
        assert pkg not in script, pkg


def test_the_plugin_trace_format_and_failure_patterns(toy_env) -> None:
    """The toy CLI's own output through its parser; its own failure message classified by its own
    pattern (quota: not retried), which the shared patterns would not know (agent_exit)."""
    out = _py(
        toy_env,
        "import json\n"
        "from ptbench.agents import load_agent\n"
        "from ptbench.agents.failures import classify\n"
        "from ptbench.agents.traces import parse_native_log\n"
        'log = \'{"toy": "say", "text": "hi"}\\n{"toy": "run", "cmd": "ls"}\\n\'\n'
        'log += \'{"toy": "error", "text": "toy says: no more coins"}\\n\'\n'
        "t = parse_native_log(log, 'toy-lines', agent='toy-copy')\n"
        "own = classify(t, log, 3, patterns=load_agent('toy-copy').failure_patterns)\n"
        "shared = classify(t, log, 3)\n"
        "print(json.dumps({'steps': [s.kind for s in t.steps], 'call': t.steps[1].tool_call.arguments,"
        " 'own': [own.kind, own.retryable], 'shared': shared.kind}))",
    )
    got = json.loads(out)
    assert got == {
        "steps": ["message", "tool_call", "error"],
        "call": {"command": "ls"},
        "own": ["quota", False],
        "shared": "agent_exit",
    }
