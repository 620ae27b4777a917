"""The guides "Add an integrity check" and "Add an agent CLI" are followed against the toy plugin
package: every file they show is that package's file (byte for byte; a pyproject fragment is in its
pyproject), they name the one place to write, their links resolve, and the campaign snippet of the
check guide validates with the package installed. The checker is also run on a planted mistake."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
import yaml

from tests.conftest import ptbench
from tests.support import TOY_PLUGINS, install_plugin_package

ROOT = Path(__file__).resolve().parents[1]
GUIDES = ROOT / "docs" / "guides"
CHECK_GUIDE = GUIDES / "add-an-integrity-check.md"
AGENT_GUIDE = GUIDES / "add-an-agent-cli.md"
# **`path`** (optional words), a blank line, then the fenced block (possibly several fragments).
_FILE_BLOCK = re.compile(r"^\*\*`([^`]+)`\*\*[^\n]*\n\n```\w*\n(.*?)^```\n(?:\n```\w*\n(.*?)^```\n)?", re.M | re.S)
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s#]+)(?:#[^)]*)?\)")


def shown_files(text: str) -> list[tuple[str, list[str]]]:
    return [(m.group(1), [b for b in m.groups()[1:] if b is not None]) for m in _FILE_BLOCK.finditer(text)]


def mismatches(text: str, package: Path) -> list[str]:
    """Each file the guide shows that differs from the package's (a pyproject: each fragment is in it)."""
    out = []
    for path, blocks in shown_files(text):
        real = package / path
        if not real.is_file():
            out.append(f"{path}: not in the package")
            continue
        content = real.read_text()
        if path == "pyproject.toml":
            out += [f"{path}: fragment not in it" for b in blocks if b not in content]
        elif blocks != [content]:
            out.append(f"{path}: differs")
    return out


@pytest.mark.parametrize(
    "guide, expected",
    [
        (CHECK_GUIDE, {"src/ptbench_toy/check.py", "pyproject.toml"}),
        (
            AGENT_GUIDE,
            {
                "src/ptbench_toy/agent.py",
                "src/ptbench_toy/agents/toy-copy/agent.yaml",
                "src/ptbench_toy/agents/toy-copy/run.sh",
                "pyproject.toml",
            },
        ),
    ],
)
def test_the_guide_shows_the_toy_plugins_files(guide: Path, expected: set[str]) -> None:
    text = guide.read_text()
    assert "The one place to write" in text
    assert {p for p, _ in shown_files(text)} == expected
    assert mismatches(text, TOY_PLUGINS) == []
    for target in _LINK.findall(text):
        if "://" not in target:
            assert (guide.parent / target).resolve().exists(), target


def test_the_checker_catches_a_planted_mistake() -> None:
    text = CHECK_GUIDE.read_text()
    planted = text.replace("if name == marker", "if name.lower() == marker", 1)
    assert planted != text
    assert mismatches(planted, TOY_PLUGINS) == ["src/ptbench_toy/check.py: differs"]
    gone = text.replace('toy = "ptbench_toy"', 'toy = "ptbench_toy.check"', 1)
    assert mismatches(gone, TOY_PLUGINS) == ["pyproject.toml: fragment not in it"]


def test_the_check_guides_campaign_snippet_validates_with_the_package(tmp_path: Path, tiny_model: Path) -> None:
    [snippet] = re.findall(r"```yaml\n(integrity:.*?)```", CHECK_GUIDE.read_text(), re.S)
    assert yaml.safe_load(snippet)["integrity"]["checks"] == ["toy_cheat"]
    campaign = tmp_path / "c.yaml"
    campaign.write_text(
        textwrap.dedent(f"""\
        name: guide
        agents: [toy-copy]
        base_models: [{{id: local/tiny, path: "{tiny_model}", label: tiny}}]
        tasks: [{{name: arithmetic, options: {{n_test: 4}}}}]
        budget: {{hours: 1, gpus: 0}}
        results_dir: "{tmp_path / "results"}"
        """)
        + snippet
    )
    env = install_plugin_package(tmp_path / "site")
    out = ptbench("validate", str(campaign), cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    out = ptbench("validate", str(campaign), cwd=tmp_path)  # without the package: refused, a line a problem
    assert out.returncode == 2, out.stderr
    assert "unknown integrity check 'toy_cheat'" in out.stderr and "unknown agent 'toy-copy'" in out.stderr
