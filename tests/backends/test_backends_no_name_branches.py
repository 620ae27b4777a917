"""No module outside a backend's own package branches on a backend's name: what differs between
backends is asked of the backend (`runs_here`, `waits`, `job_identity`, `preflight`, ...), so a
site's scheduler (a plugin) is never missed by an `if name == "slurm"` elsewhere. Plays the
regression: a planted branch is found, with where it is."""

from __future__ import annotations

import ast
from pathlib import Path

import ptbench
from ptbench.backends.registry import BACKENDS

PACKAGE = Path(ptbench.__file__).parent
# Where a backend's name may be compared: its own package, and jobs.json's reader of the format
# before schema 1 (old files name the three built-in backends; nothing new is written that way).
OWN = {"backends/local", "backends/slurm", "backends/htcondor", "backends/jobs.py"}


def _branches(source: str, names: set[str]) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            consts = [c for c in [node.left, *node.comparators] if isinstance(c, ast.Constant)]
            tuples = [c for c in [node.left, *node.comparators] if isinstance(c, (ast.Tuple, ast.Set, ast.List))]
            values = {c.value for c in consts} | {
                e.value for t in tuples for e in t.elts if isinstance(e, ast.Constant)
            }
            if values & names:
                lines.append(node.lineno)
    return lines


def _found(package: Path, names: set[str]) -> dict[str, list[int]]:
    found = {}
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        if any(rel == own or rel.startswith(own + "/") for own in OWN):
            continue
        if lines := _branches(path.read_text(), names):
            found[rel] = lines
    return found


def test_nothing_outside_a_backend_branches_on_its_name() -> None:
    names = set(BACKENDS.names())
    assert {"local", "slurm", "htcondor"} <= names  # the registry loaded the built-in ones
    assert len(list(PACKAGE.rglob("*.py"))) > 100, "the walk found too few modules"
    assert _found(PACKAGE, names) == {}, "backend-name branches (module: lines)"


def test_the_check_sees_a_branch(tmp_path: Path) -> None:
    names = {"local", "slurm", "htcondor"}
    assert _branches('if backend == "slurm":\n    pass\n', names) == [1]
    assert _branches('ok = name not in ("local", "htcondor")\n', names) == [1]
    assert _branches("if chosen.runs_here:\n    pass\n", names) == []
    # planted in a module outside the backends (the regression), and inside one's own package (allowed)
    (tmp_path / "runner").mkdir()
    (tmp_path / "runner" / "x.py").write_text('def f(c):\n    return c.backend.name == "slurm"\n')
    (tmp_path / "backends" / "slurm").mkdir(parents=True)
    (tmp_path / "backends" / "slurm" / "y.py").write_text('NAME_OK = "slurm" == "slurm"\n')
    assert _found(tmp_path, names) == {"runner/x.py": [2]}
