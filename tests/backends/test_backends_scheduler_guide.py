"""docs/guides/add-a-scheduler.md, followed as written: its pyproject and its module, taken from the
page's code blocks into a package of their own, installed; then the page's commands. Its one place
to write is the module; the complete example it points at (the toy scheduler) exists and runs a
campaign (tests/backends/test_backends_plugin.py)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.conftest import ptbench
from tests.support import install_plugin_package
from tests.test_doctor import WIDE, rows

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guides" / "add-a-scheduler.md"


def blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", GUIDE.read_text(), flags=re.S | re.M)


@pytest.fixture(scope="module")
def guide_env(tmp_path_factory) -> dict[str, str]:
    """The guide's package, written from its code blocks and installed as step 3 says."""
    root = tmp_path_factory.mktemp("guide")
    (toml,) = blocks("toml")
    (module,) = blocks("python")
    entry = re.search(r'^\[project\.entry-points\."ptbench\.plugins"\]\n(\w+) = "([\w.]+)"$', toml, flags=re.M)
    assert entry is not None, "the guide's pyproject names no entry point"
    package, _, module_name = entry.group(2).rpartition(".")
    (root / "pkg" / "src" / package).mkdir(parents=True)
    (root / "pkg" / "pyproject.toml").write_text(toml)  # installed without dependencies (ptbench is here)
    (root / "pkg" / "src" / package / "__init__.py").write_text("")
    (root / "pkg" / "src" / package / f"{module_name}.py").write_text(module)
    return install_plugin_package(root / "site-packages", root / "pkg")


def test_the_guide_names_one_place_and_a_complete_example() -> None:
    text = GUIDE.read_text()
    assert "**The one place to write:**" in text
    toy = ROOT / "tests" / "plugins" / "ptbench-toy" / "src" / "ptbench_toy" / "scheduler.py"
    assert toy.exists() and "src/ptbench_toy/scheduler.py" in text


def test_the_guide_s_backend_is_known_to_doctor_and_validate(guide_env, test_agents, tmp_path) -> None:
    # doctor --backend pbs: its preflight, failing without qsub and ready with one on PATH
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    bare = {**guide_env, **WIDE, "PATH": f"{bin_dir}:/usr/bin:/bin"}
    assert "qsub not on PATH" in rows(ptbench("doctor", "--backend", "pbs", env=bare).stdout)["scheduler (pbs)"]
    qsub = bin_dir / "qsub"
    qsub.write_text("#!/bin/sh\nexit 0\n")
    qsub.chmod(0o755)
    found = rows(ptbench("doctor", "--backend", "pbs", env=bare).stdout)["scheduler (pbs)"]
    assert f"{qsub}; queue workq" in found and "✓" in found
    # validate campaign.yaml with backend: {name: pbs, options: {queue: gpu}}
    (tmp_path / "tiny").mkdir()
    campaign = tmp_path / "campaign.yaml"

    def validate(backend: str):
        campaign.write_text(
            "name: g\nagents: [{name: quick-copy}]\n"
            f'base_models: [{{id: local/tiny, path: "{tmp_path / "tiny"}", label: tiny}}]\n'
            f"tasks: [arithmetic]\nbudget: {{hours: 1, gpus: 0}}\nbackend: {backend}\n"
        )
        return ptbench("validate", str(campaign), env={**guide_env, "PTBENCH_AGENTS_PATH": str(test_agents)})

    ok = validate("{name: pbs, options: {queue: gpu}}")
    assert ok.returncode == 0, ok.stderr
    bad = validate("{name: pbs, options: {queeu: gpu}}")
    assert bad.returncode == 2 and "campaign.yaml:6" in bad.stderr and "did you mean 'queue'" in bad.stderr
    # "A misspelt name (backend: {name: pbz}) is one line with the file, the line and did you mean 'pbs'?"
    bad = validate("{name: pbz}")
    lines = bad.stderr.strip().splitlines()
    assert bad.returncode == 2 and len(lines) == 1, bad.stderr
    assert "campaign.yaml:6" in lines[0] and "did you mean 'pbs'?" in lines[0]
    # the control: the same campaign without the guide's package
    plain = {k: v for k, v in guide_env.items() if k != "PYTHONPATH"}
    if os.environ.get("PYTHONPATH"):
        plain["PYTHONPATH"] = os.environ["PYTHONPATH"]
    plain["PTBENCH_AGENTS_PATH"] = str(test_agents)
    campaign.write_text(campaign.read_text().replace("pbz", "pbs"))
    refused = ptbench("validate", str(campaign), env=plain)
    assert refused.returncode == 2 and "unknown backend 'pbs'" in refused.stderr
