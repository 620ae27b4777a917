"""How built-in integrity checks are found: each registers where it is defined, and the registry
imports every public module of `ptbench.integrity` (no list to edit). A copy of the package with one
planted check module shows a new check appears by that file alone; its control is the real package's
names. `IntegrityCheck.check` is abstract: a check that forgets it is refused where it is defined."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ptbench.integrity.checks import CHECKS, IntegrityCheck, NoSettings, register_check

SRC = Path(__file__).resolve().parents[2] / "src"
BUILTIN = ["api_usage", "contamination", "judge", "memorization", "model_identity"]

PLANTED = """
from ptbench.integrity.checks import IntegrityCheck, register_check
from ptbench.integrity.report import Finding


@register_check("planted_probe")
class PlantedProbe(IntegrityCheck):
    def check(self, ctx):
        return Finding(verdict="clean", reason="planted")
"""


def _names_in(src: Path) -> list[str]:
    code = "from ptbench.integrity.checks import CHECKS; print(' '.join(CHECKS.names()))"
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_the_builtin_checks_are_found_without_a_list() -> None:
    assert [n for n in CHECKS.names() if n in BUILTIN] == BUILTIN  # same names, same (sorted) order


def test_a_new_check_module_registers_by_itself(tmp_path: Path) -> None:
    shutil.copytree(SRC / "ptbench", tmp_path / "ptbench", ignore=shutil.ignore_patterns("__pycache__"))
    integrity = tmp_path / "ptbench" / "integrity"
    (integrity / "contamination" / "planted_probe.py").write_text(PLANTED)  # in a subpackage too
    # control: a private module is no built-in check's home (the walk skips names starting with '_')
    (integrity / "_private_probe.py").write_text(PLANTED.replace("planted_probe", "private_probe"))
    assert _names_in(tmp_path) == sorted([*BUILTIN, "planted_probe"])


def test_a_check_without_check_is_refused_where_it_is_defined() -> None:
    with pytest.raises(TypeError, match=r"integrity check 'forgot': .*Forgot does not define check\(ctx\)"):

        @register_check("forgot")
        class Forgot(IntegrityCheck):
            Settings = NoSettings

    assert "forgot" not in CHECKS

    class Unregistered(IntegrityCheck):  # not registered: still cannot be instantiated
        pass

    with pytest.raises(TypeError, match="abstract method"):
        Unregistered(NoSettings())  # type: ignore[abstract]


def test_a_check_with_check_can_be_made() -> None:
    class Written(IntegrityCheck):
        def check(self, ctx):  # type: ignore[no-untyped-def]
            raise NotImplementedError

    assert Written(NoSettings()).settings == NoSettings()
