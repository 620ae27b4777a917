"""submitit's private API (backends/slurm/private_submitit.py) against the installed submitit, and
the pin that keeps it the version these checks ran against."""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path

from ptbench.backends.slurm import private_submitit

REPO = Path(__file__).resolve().parents[3]


def test_sbatch_script_and_submit_module(tmp_path: Path) -> None:
    script = private_submitit.submitit_sbatch_script(
        command="python -u -m " + private_submitit.SUBMITIT_SUBMIT_MODULE + " " + str(tmp_path),
        folder=tmp_path,
        map_count=3,
        time=5,
        partition="debug",
    )
    assert script.startswith("#!/bin/bash") and "#SBATCH --array=0-2" in script and "--partition=debug" in script
    assert private_submitit.SUBMITIT_SUBMIT_MODULE in script
    spec = importlib.util.find_spec(private_submitit.SUBMITIT_SUBMIT_MODULE)
    assert spec is not None and spec.origin and "submitit" in spec.origin


def test_the_slurm_extra_pins_submitit_exactly() -> None:
    """A private API is checked against one release: the extra must name exactly one."""
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    pins = [r for r in extras["slurm"] if r.startswith("submitit")]
    assert len(pins) == 1 and "==" in pins[0], pins
