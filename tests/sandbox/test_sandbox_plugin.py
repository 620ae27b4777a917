"""Sandboxes and inference engines are registries like backends: a package that edits no ptbench file
adds one by registering it where it is defined (`SANDBOXES`, `ENGINES`), `build_command` and
`get_engine` find it by name, and `validate` accepts a campaign naming it; without the package the
same campaign is refused, each name on its own line with file:line."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import ptbench
from tests.support import install_plugin_package

MODULE = """
from ptbench.inference.base import ENGINES
from ptbench.sandbox.request import SANDBOXES, SandboxCommand


@SANDBOXES.register("site-jail")
def jail_command(req):
    return SandboxCommand(argv=["site-jail", "--", *req.argv], env=dict(req.env), cwd=req.workspace)


@ENGINES.register("site-engine")
class SiteEngine:
    name = "site-engine"

    def __init__(self, model_path, **options):
        self.model_path = model_path
"""

CAMPAIGN = """\
name: k
agents: [{name: quick-copy}]
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [arithmetic]
budget: {hours: 1, gpus: 0}
sandbox: site-jail
evaluation: {engine: site-engine}
"""


def _package(root: Path) -> Path:
    pkg = root / "pkg"
    (pkg / "src" / "site_kinds").mkdir(parents=True)
    (pkg / "pyproject.toml").write_text(
        textwrap.dedent("""
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "site-kinds"
        version = "0.0.1"
        [project.entry-points."ptbench.plugins"]
        kinds = "site_kinds"
        """)
    )
    (pkg / "src" / "site_kinds" / "__init__.py").write_text(MODULE)
    return pkg


def test_a_plugin_sandbox_and_engine_are_found_and_validated(tmp_path, test_agents):
    env = install_plugin_package(tmp_path / "site", _package(tmp_path))
    env["PTBENCH_AGENTS_PATH"] = str(test_agents)
    code = (
        "from pathlib import Path\n"
        "from ptbench.sandbox import SandboxRequest, build_command\n"
        "from ptbench.inference import get_engine\n"
        "req = SandboxRequest(argv=['echo', 'hi'], env={}, workspace=Path('.'), home=Path('.'))\n"
        "print(build_command('site-jail', req).argv, get_engine('site-engine', '/m').model_path)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "['site-jail', '--', 'echo', 'hi'] /m", out.stderr
    (tmp_path / "tiny").mkdir()
    campaign = tmp_path / "c.yaml"
    campaign.write_text(CAMPAIGN.replace("@MODEL@", str(tmp_path / "tiny")))
    ok = ptbench("validate", str(campaign), env=env)
    assert ok.returncode == 0, ok.stderr
    # the control: the suite's own environment, without the package
    plain = ptbench("validate", str(campaign), env={"PTBENCH_AGENTS_PATH": str(test_agents)})
    lines = plain.stderr.strip().splitlines()
    assert plain.returncode == 2 and len(lines) == 2, plain.stderr
    assert "c.yaml:6: sandbox: unknown sandbox 'site-jail' (known: auto, apptainer, bwrap, none)" in lines[0]
    assert "c.yaml:7: evaluation.engine: unknown engine 'site-engine'" in lines[1]
