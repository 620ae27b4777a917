"""Suites: several bootcamps with weights; generate, rollout and merge on a suite; accuracy per level."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from ..chat_endpoint import serve_in_thread
from ..conftest import CAMPAIGNS
from ..policies import arithmetic_policy, mastermind_policy


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-m", "ptbench", "bootcamp", *args], capture_output=True, text=True, timeout=300, env=env
    )


def _suite(tmp_path: Path) -> Path:
    for name in ("arithmetic", "mastermind"):
        data = yaml.safe_load((CAMPAIGNS / f"{name}.yaml").read_text())
        data["splits"] = {"test": 4, "train": 2}
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(data))
    suite = {"suite": "mix", "bootcamps": [{"config": "arithmetic.yaml", "weight": 2}, {"config": "mastermind.yaml"}]}
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
    return tmp_path / "suite.yaml"


def both(messages, tools):
    user = next(m["content"] for m in messages if m["role"] == "user")
    return mastermind_policy(messages, tools) if "Mastermind" in user else arithmetic_policy(1)(messages, tools)


def test_suite_generate_rollout_merge_report_per_source_and_level(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    res = _cli("generate", str(suite), "--out", str(tmp_path / "data"))
    assert res.returncode == 0, res.stderr
    assert len((tmp_path / "data" / "arithmetic" / "test.jsonl").read_text().splitlines()) == 8  # weight 2
    assert len((tmp_path / "data" / "mastermind" / "test.jsonl").read_text().splitlines()) == 4
    out = tmp_path / "rollout"
    with serve_in_thread(both) as (url, _):
        res = _cli("rollout", str(suite), "--endpoint", url, "--model", "scripted", "--out", str(out))
    assert res.returncode == 0, res.stderr
    assert "bootcamp/arithmetic / easy" in res.stdout and "bootcamp/mastermind / classic" in res.stdout
    summary = json.loads((out / "merged" / "summary.json").read_text())
    assert summary["suite"] == "mix" and summary["episodes"] == summary["expected"] == 12 and summary["missing"] == 0
    assert set(summary["by_data_source"]) == {"bootcamp/arithmetic", "bootcamp/mastermind"}
    levels = summary["by_level"]
    assert set(levels["bootcamp/arithmetic"]) == {"easy", "hard"} and set(levels["bootcamp/mastermind"]) == {
        "small",
        "classic",
    }
    arith = levels["bootcamp/arithmetic"]
    assert arith["easy"]["n"] + arith["hard"]["n"] == summary["by_data_source"]["bootcamp/arithmetic"]["n"] == 8
    assert all(s["success_rate"] == 1.0 for lv in levels.values() for s in lv.values())
    traces = (out / "merged" / "traces.jsonl").read_text().splitlines()
    assert len(traces) == 12 and len({json.loads(t)["sample_id"] for t in traces}) == 12
    again = _cli("merge", str(out), "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["traces_sha256"] == summary["traces_sha256"]


def test_bad_suite_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(
        yaml.safe_dump({"suite": "x", "bootcamps": [{"config": "a.yaml", "weight": -1}]})
    )
    res = _cli("generate", str(tmp_path / "suite.yaml"))
    assert res.returncode == 2 and "weight" in res.stderr and "Traceback" not in res.stderr
