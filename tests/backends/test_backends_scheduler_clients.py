"""Scheduler clients (submitit, HTCondor's bindings) are imported under ptbench.backends only, so a
scheduler's dependency and its private API live with its backend and nowhere else."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CLIENT_IMPORT = re.compile(r"^\s*(?:import|from)\s+(submitit|htcondor2?|classad2?)\b", re.M)


def client_imports_outside_backends(root: Path) -> list[str]:
    found = []
    for path in sorted((root / "src" / "ptbench").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("src/ptbench/backends/"):
            continue
        text = path.read_text(errors="replace")
        found += [f"{rel}: {m.group(1)}" for m in CLIENT_IMPORT.finditer(text)]
    return found


def test_scheduler_clients_are_imported_under_backends_only() -> None:
    assert client_imports_outside_backends(REPO) == []


def test_the_check_sees_a_client_outside_backends(tmp_path: Path) -> None:
    core = tmp_path / "src" / "ptbench" / "core"
    core.mkdir(parents=True)
    (core / "private_api.py").write_text("def f():\n    from submitit.slurm.slurm import _make_sbatch_string\n")
    (tmp_path / "src" / "ptbench" / "backends").mkdir()
    (tmp_path / "src" / "ptbench" / "backends" / "ok.py").write_text("import htcondor2\n")
    assert client_imports_outside_backends(tmp_path) == ["src/ptbench/core/private_api.py: submitit"]
