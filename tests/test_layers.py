"""The package's layers are a contract CI enforces, not a convention.

pyproject.toml declares the layers ([tool.importlinter]); import-linter builds the import graph of
every module, function-local imports included, and fails when an arrow points up. Here it runs on
the real package, and on a copy with one deliberate upward import to show that it would fail.

Modules stay under 500 lines (a module that grows past it is split by concern, as `cli/main.py`
was): checked on the real package, and on a planted long module.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MAX_LINES = 500  # a module has fewer lines than this


def long_modules(package: Path) -> list[str]:
    """Every Python module under `package` with MAX_LINES lines or more, as 'path: N lines'."""
    found = []
    for path in sorted(package.rglob("*.py")):
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n >= MAX_LINES:
            found.append(f"{path.relative_to(package.parent)}: {n} lines")
    return found


def _lint(cwd: Path, src: Path) -> subprocess.CompletedProcess[str]:
    # import-linter's command through this interpreter: in a venv made with --system-site-packages
    # (scripts/venv.sh) the package may come from the base interpreter, whose `lint-imports` script is
    # not beside sys.executable
    try:
        import importlinter.cli  # noqa: F401
    except ImportError:
        raise AssertionError("import-linter is not installed (pip install -e '.[dev]')") from None
    env = {**os.environ, "PYTHONPATH": str(src)}
    run = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    return subprocess.run(
        [sys.executable, "-c", run, "--no-cache"], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


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


def test_every_module_is_under_500_lines() -> None:
    package = REPO / "src" / "ptbench"
    assert len(list(package.rglob("*.py"))) > 100, "the walk found too few modules"
    assert long_modules(package) == []


def test_a_long_module_is_found(tmp_path: Path) -> None:
    pkg = tmp_path / "ptbench" / "deep"
    pkg.mkdir(parents=True)
    (pkg / "short.py").write_text("x = 1\n" * (MAX_LINES - 1))
    (pkg / "long.py").write_text("x = 1\n" * MAX_LINES)
    assert long_modules(tmp_path / "ptbench") == ["ptbench/deep/long.py: 500 lines"]
