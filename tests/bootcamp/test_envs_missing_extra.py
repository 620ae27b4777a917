"""An environment whose optional package is missing stops before any work with one line naming the
extra (exit 2), never a traceback, and never a case loop retrying the ImportError for ever (issue 31:
`bootcamp generate battery.yaml` without pybamm spun on both cores)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# sys.modules[name] = None: the package reads as not installed (find_spec gives None, import raises).
HIDE = "import sys; sys.modules.update({{m: None for m in {mods!r}}}); from ptbench.cli.main import main; main()"


@pytest.mark.parametrize(
    ("config", "modules", "extra"),
    [
        ("battery", ["pybamm"], "bootcamp-battery"),
        ("poker", ["pokerkit"], "bootcamp-poker"),
        ("combinatorial", ["ortools"], "bootcamp-combinatorial"),
        ("forecasting", ["statsmodels"], "bootcamp-forecasting"),
    ],
)
def test_a_missing_extra_is_one_line_before_any_work(tmp_path, config, modules, extra):
    out = tmp_path / "data"
    argv = ["bootcamp", "generate", str(REPO / "campaigns" / "bootcamp" / f"{config}.yaml"), "--out", str(out)]
    proc = subprocess.run(
        [sys.executable, "-c", HIDE.format(mods=modules), *argv],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"pip install 'ptbench[{extra}]'" in lines[0], proc.stderr[-2000:]
    assert not out.exists()  # nothing half-written


def test_a_case_loop_gives_up_on_an_error_that_repeats(monkeypatch):
    """battery_design redraws designs the solver rejects, a bounded number of times."""
    import random

    from ptbench.bootcamp.envs import battery

    calls = []

    def broken(design, c_rate):
        calls.append(1)
        raise ArithmeticError("solver failed")

    monkeypatch.setattr(battery, "simulate", broken)
    with pytest.raises(RuntimeError, match="no design the solver could discharge"):
        battery.BatteryDesign(level="easy").case(random.Random(0))
    assert len(calls) == battery.MAX_DRAWS
