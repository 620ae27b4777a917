"""Third-party plugins through the `ptbench.plugins` entry-point group: a package that edits no
ptbench file registers a task by being installed, and a broken plugin is one line naming it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.support import install_plugin_package


def _package(root: Path, body: str) -> Path:
    src = root / "pkg"
    (src / "src" / "site_plugin").mkdir(parents=True)
    (src / "pyproject.toml").write_text(
        textwrap.dedent("""
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "site-plugin"
        version = "0.0.1"
        [project.entry-points."ptbench.plugins"]
        site = "site_plugin"
        """)
    )
    (src / "src" / "site_plugin" / "__init__.py").write_text(textwrap.dedent(body))
    return src


def _ask(env: dict[str, str], code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


def test_an_installed_plugin_registers_without_editing_ptbench(tmp_path: Path) -> None:
    pkg = _package(
        tmp_path,
        """
        from ptbench.tasks.arithmetic import Arithmetic
        from ptbench.tasks.base import register_task

        @register_task("site_arithmetic")
        class SiteArithmetic(Arithmetic):
            pass
        """,
    )
    env = install_plugin_package(tmp_path / "site", pkg)
    out = _ask(env, "from ptbench.tasks.base import TASKS; print('site_arithmetic' in TASKS.names())")
    assert out.stdout.strip() == "True", out.stderr
    # The suite's own interpreter never saw it.
    from ptbench.tasks.base import TASKS

    assert "site_arithmetic" not in TASKS.names()


def test_a_plugin_that_fails_to_import_is_one_line_naming_it(tmp_path: Path) -> None:
    pkg = _package(tmp_path, "raise RuntimeError('needs the site scheduler client')\n")
    env = install_plugin_package(tmp_path / "site", pkg)
    out = _ask(
        env,
        "from ptbench.core.errors import UserError\n"
        "from ptbench.tasks.base import TASKS\n"
        "try:\n    TASKS.get('gsm8k')\nexcept UserError as e:\n    print(e)\n",
    )
    line = out.stdout.strip()
    assert "plugin 'site'" in line and "site-plugin" in line and "needs the site scheduler client" in line, out
    assert "pip uninstall site-plugin" in line and "\n" not in line
