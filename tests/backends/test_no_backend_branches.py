"""The command line never branches on a backend's name: what differs between backends is asked of
the backend (`runs_here`, `waits`, `submit_units`, ...). Plays the regression: an `if backend ==
"slurm"` added to a CLI module fails here, with where it is."""

from __future__ import annotations

import ast
from pathlib import Path

import ptbench.cli

NAMES = {"local", "slurm", "htcondor"}


def _branches(source: str) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            consts = [c for c in [node.left, *node.comparators] if isinstance(c, ast.Constant)]
            tuples = [c for c in [node.left, *node.comparators] if isinstance(c, (ast.Tuple, ast.Set, ast.List))]
            values = {c.value for c in consts} | {
                e.value for t in tuples for e in t.elts if isinstance(e, ast.Constant)
            }
            if values & NAMES:
                lines.append(node.lineno)
    return lines


def test_the_cli_asks_the_backend_instead_of_naming_it() -> None:
    found = {
        str(path.name): lines
        for path in sorted(Path(ptbench.cli.__file__).parent.glob("*.py"))
        if (lines := _branches(path.read_text()))
    }
    assert found == {}, f"backend-name branches in the CLI (file: lines): {found}"


def test_the_check_sees_a_branch() -> None:
    assert _branches('if backend == "slurm":\n    pass\n') == [1]
    assert _branches('ok = name not in ("local", "htcondor")\n') == [1]
    assert _branches("if chosen.runs_here:\n    pass\n") == []
