"""`slow` tests are opt-in locally (tests/conftest.py): a plain `pytest` leaves them out and says how
to run them; --slow, PTBENCH_SLOW=1, CI=true, `-m` naming the mark and a test named on the command
line run them. Run as real pytest sessions over a two-test tree that uses the suite's own hooks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

SESSIONS = pytest.mark.slow  # a pytest session costs about 3 CPU seconds here


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("optin")
    (root / "conftest.py").write_text(
        "from tests.conftest import pytest_addoption, pytest_collection_modifyitems, pytest_terminal_summary\n"
    )
    (root / "test_two.py").write_text(
        "import pytest\n\n"
        "def test_fast():\n    pass\n\n"
        "@pytest.mark.slow\n@pytest.mark.parametrize('n', [1, 2])\ndef test_slow(n):\n    pass\n"
    )
    (root / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow: slow\n")
    return root


def session(tree: Path, *args: str, **env: str) -> tuple[set[str], str]:
    """The tests that ran (their names) and the output of `pytest -v ARGS` in the tree."""
    environ = {k: v for k, v in os.environ.items() if k not in ("CI", "PTBENCH_SLOW", "PYTEST_ADDOPTS")}
    environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), environ.get("PYTHONPATH")]))
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-p", "no:xdist", *args],
        cwd=tree,
        env={**environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    ran = {line.split("::", 1)[1].split(" ", 1)[0] for line in out.stdout.splitlines() if " PASSED" in line}
    return ran, out.stdout


ALL = {"test_fast", "test_slow[1]", "test_slow[2]"}


@SESSIONS
def test_a_plain_run_leaves_them_out_and_says_how_to_run_them(tree: Path) -> None:
    ran, out = session(tree)
    assert ran == {"test_fast"}
    assert "2 slow tests not run: pass --slow or set PTBENCH_SLOW=1" in out and "2 deselected" in out


@SESSIONS
@pytest.mark.parametrize(
    ("args", "env"),
    [(["--slow"], {}), ([], {"PTBENCH_SLOW": "1"}), ([], {"CI": "true"})],
    ids=["--slow", "PTBENCH_SLOW=1", "CI=true"],
)
def test_asked_for_or_in_ci_every_test_runs(tree: Path, args: list[str], env: dict[str, str]) -> None:
    ran, out = session(tree, *args, **env)
    assert ran == ALL and "not run" not in out


@SESSIONS
def test_a_mark_expression_or_a_named_test_decides(tree: Path) -> None:
    assert session(tree, "-m", "slow")[0] == {"test_slow[1]", "test_slow[2]"}
    assert session(tree, "test_two.py::test_slow")[0] == {"test_slow[1]", "test_slow[2]"}


def test_ci_runs_every_test() -> None:
    """CI runs scripts/test.sh (.ci/run), whose pytest asks for the slow tests."""
    assert "bash scripts/test.sh" in (REPO / ".ci" / "run").read_text()
    pytest_lines = [
        line for line in (REPO / "scripts" / "test.sh").read_text().splitlines() if line.startswith("python -m pytest")
    ]
    assert pytest_lines and all(" --slow " in line for line in pytest_lines), pytest_lines
