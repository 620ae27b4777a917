"""`ptbench baseline` writes result records that `ptbench collate` turns into a table."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ptbench.results.schema import ResultRecord

from .conftest import FIXTURES


@pytest.mark.slow
def test_baseline_records_are_collated(tiny_model, tmp_path):
    opts = {
        "gsm8k": {"data_path": str(FIXTURES / "gsm8k"), "max_new_tokens": 12, "retry_max_new_tokens": []},
        "gpqa": {"data_path": str(FIXTURES / "gpqa"), "max_new_tokens": 12, "retry_max_new_tokens": []},
    }
    out = tmp_path / "baselines"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "ptbench",
            "baseline",
            "--model",
            str(tiny_model),
            "--tasks",
            "gsm8k,gpqa",
            "--fewshot",
            "0,3",
            "--engine",
            "transformers",
            "--limit",
            "2",
            "--out",
            str(out),
            "--task-options",
            json.dumps(opts),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    records = [ResultRecord.model_validate_json(p.read_text()) for p in sorted(out.rglob("result.json"))]
    labels = sorted((r.agent.label, r.task.name) for r in records)
    assert labels == [("base (3-shot)", "gsm8k"), ("base (zero-shot)", "gpqa"), ("base (zero-shot)", "gsm8k")]
    assert all(r.status == "completed" and r.primary_metric.n == 2 for r in records)
    assert {r.evaluation["prompt_format"] for r in records} == {"base"}
    table = subprocess.run(
        [sys.executable, "-m", "ptbench", "collate", str(out)], capture_output=True, text=True, timeout=120
    )
    assert table.returncode == 0 and "base (zero-shot)" in table.stdout and "base (3-shot)" in table.stdout
