"""The package's layers are a contract CI enforces, not a convention.

pyproject.toml declares the layers ([tool.importlinter]); import-linter builds the import graph of
every module, function-local imports included, and fails when an arrow points up. Here it runs on
the real package, and on a copy with one deliberate upward import to show that it would fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _lint(cwd: Path, src: Path) -> subprocess.CompletedProcess[str]:
    lint = Path(sys.executable).with_name("lint-imports")
    assert lint.exists(), "import-linter is not installed (pip install -e '.[dev]')"
    env = {**os.environ, "PYTHONPATH": str(src)}
    return subprocess.run([str(lint), "--no-cache"], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_package_keeps_its_layers() -> None:
    res = _lint(REPO, REPO / "src")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "ptbench layers KEPT" in res.stdout


def test_an_upward_import_breaks_the_contract(tmp_path: Path) -> None:
    shutil.copytree(
        REPO / "src" / "ptbench", tmp_path / "src" / "ptbench", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    files = tmp_path / "src" / "ptbench" / "core" / "files.py"
    # hidden inside a function, where a cycle is easiest to miss
    files.write_text(
        files.read_text()
        + "\n\ndef _sneaky():\n    from ptbench.runner.pipeline import run_trial\n\n    return run_trial\n"
    )
    res = _lint(tmp_path, tmp_path / "src")
    assert res.returncode != 0, res.stdout
    assert "ptbench layers BROKEN" in res.stdout
    assert "ptbench.core.files -> ptbench.runner.pipeline" in res.stdout
