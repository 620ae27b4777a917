"""The gate scripts/test.sh runs before pytest (ruff check, ruff format --check, mypy) can fail.

The tree itself is checked by scripts/test.sh; here each tool, with the project's own configuration
from pyproject.toml, is shown refusing a planted problem of the kind the configuration promises to
catch, so a configuration that silently stopped checking (a rule set emptied, a path dropped, mypy
pointed at nothing) fails a test. Fast: each tool reads one small file.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "pyproject.toml"


def _tool(module: str) -> None:
    try:
        __import__(module)
    except ImportError:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"{module} is not installed (the dev extra pins it)")


def _run(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *argv], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_the_configuration_promises_what_the_issue_asks() -> None:
    data = tomllib.loads(CONFIG.read_text())
    ruff, mypy = data["tool"]["ruff"], data["tool"]["mypy"]
    assert ruff["line-length"] == 120
    assert {"E", "F", "I", "UP", "B"} <= set(ruff["lint"]["select"])
    assert mypy["files"] == ["src/ptbench"] and mypy["check_untyped_defs"] is True
    assert "ignore_errors" not in mypy and "ignore_missing_imports" not in mypy  # only named modules may be
    script = (ROOT / "scripts" / "test.sh").read_text()
    gate = script.index("python -m mypy")
    assert script.index("python -m ruff check") < gate < script.index("python -m pytest")


def test_ruff_refuses_long_lines_unsorted_imports_and_a_zip_without_strict(tmp_path: Path) -> None:
    _tool("ruff")
    bad = tmp_path / "bad.py"
    bad.write_text(
        f"import sys\nimport os\n\n\ndef f(a, b):\n    return list(zip(a, b)), os.sep, sys.argv, {'x' * 130!r}\n"
    )
    res = _run("ruff", "check", "--no-fix", "--config", str(CONFIG), "--output-format", "concise", str(bad), cwd=ROOT)
    assert res.returncode == 1, res.stdout + res.stderr
    for code in ("I001", "E501", "B905"):
        assert code in res.stdout, (code, res.stdout)
    res = _run("ruff", "format", "--check", "--config", str(CONFIG), str(bad), cwd=ROOT)
    assert res.returncode == 1 and "would be reformatted" in res.stdout + res.stderr, res.stdout + res.stderr


def test_mypy_refuses_a_type_error_in_an_unannotated_function(tmp_path: Path) -> None:
    _tool("mypy")
    bad = tmp_path / "bad.py"
    # check_untyped_defs: the body of a function without annotations is checked too
    bad.write_text("def f():\n    x: int = 'not a number'\n    return x\n")
    res = _run("mypy", "--config-file", str(CONFIG), "--no-incremental", str(bad), cwd=tmp_path)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "Found 1 error" in res.stdout and "[assignment]" in res.stdout, res.stdout
