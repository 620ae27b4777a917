"""docs/guides/add-an-environment.md followed against the toy plugin package: an environment family
from outside ptbench, installed through the entry point, is verified by `ptbench bootcamp verify`
and listed by `bootcamp list --verified`; the planted `toy.half` (its reward pays the right answer
0.5) is reported failed, exits 1 and is left out of the verified list."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import install_plugin_package

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guides" / "add-an-environment.md"


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("toy")
    env = install_plugin_package(tmp / "site")
    env["PTBENCH_BOOTCAMP_VERIFY_STORE"] = str(tmp / "verify.json")
    env["COLUMNS"] = "80"
    return env


def _ptbench(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ptbench", *args], env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.slow
def test_the_guide_s_steps_verify_and_list_the_toy_environment(plugin_env: dict[str, str]) -> None:
    text = GUIDE.read_text()
    assert "tests/plugins/ptbench-toy/src/ptbench_toy/environment.py" in text  # the one place, named
    steps = [line.split(None, 1)[1] for line in re.findall(r"(?m)^ptbench bootcamp .+$", text)]
    assert [s.split()[1] for s in steps] == ["verify", "list"]
    verify = _ptbench(plugin_env, *steps[0].split())
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert re.search(r"toy\.count\s+ptbench-toy\s+20\s+100%\s+100%\s+[\d.]+\s+verified", verify.stdout), verify.stdout
    assert all(len(line) <= 80 for line in verify.stdout.splitlines())  # the table reads at 80 columns
    listed = _ptbench(plugin_env, *steps[1].split(), "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    assert rows["toy.count"]["verified"] == "verified" and rows["toy.count"]["source"] == "ptbench-toy"
    # --verified lists only what passed: a built-in environment never verified in this store is left out
    assert "arithmetic" not in rows


@pytest.mark.slow
def test_a_planted_broken_environment_is_reported_and_left_out(plugin_env: dict[str, str], tmp_path: Path) -> None:
    env = {**plugin_env, "PTBENCH_TOY_BROKEN_ENV": "1"}
    out = tmp_path / "verify.json"
    run = _ptbench(env, "bootcamp", "verify", "toy.count", "toy.half", "--cases", "8", "--json", str(out))
    assert run.returncode == 1, run.stdout + run.stderr
    assert "toy.half failed: case 0: the reference answer scored 0.5" in run.stdout
    results = {r["name"]: r for r in json.loads(out.read_text())["environments"]}
    assert (results["toy.half"]["status"], results["toy.half"]["oracle_pass"]) == ("failed", 0)
    assert results["toy.count"]["status"] == "verified"
    assert json.loads(out.read_text())["totals"]["ptbench-toy"] == {
        "environments": 2, "verified": 1, "failed": 1, "no oracle": 0, "error": 0}  # fmt: skip
    listed = {r["name"]: r["verified"] for r in json.loads(_ptbench(env, "bootcamp", "list", "--json").stdout)}
    assert (listed["toy.half"], listed["toy.count"]) == ("failed", "verified")
    verified = json.loads(_ptbench(env, "bootcamp", "list", "--json", "--verified").stdout)
    assert "toy.half" not in {r["name"] for r in verified} and "toy.count" in {r["name"] for r in verified}


@pytest.mark.slow
def test_an_unknown_environment_is_one_line_and_exit_2(tmp_path: Path) -> None:
    env = {"PTBENCH_BOOTCAMP_VERIFY_STORE": str(tmp_path / "v.json")}
    import os

    run = subprocess.run([sys.executable, "-m", "ptbench", "bootcamp", "verify", "rg.leg_countin"],
                         env={**os.environ, **env}, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert run.returncode == 2
    assert "no environment 'rg.leg_countin' (did you mean rg.leg_counting?)" in run.stderr
    assert not (tmp_path / "v.json").exists()
