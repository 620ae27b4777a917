"""Acceptance: the demo campaign, as the quickstart runs it: the reference recipe masters the task on
every seed (measured: 100 % on both seeds with AVX2 and with plain C++ kernels, docs/campaigns.md)
and the base model scores nothing."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import REPO, ptbench

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_demo_campaign_reference_masters_the_task(tiny_model, tmp_path):
    text = (REPO / "campaigns" / "demo.yaml").read_text()
    text = text.replace("path: .cache/tiny-llama", f"path: {tiny_model}").replace(
        "results_dir: results", f"results_dir: {tmp_path / 'results'}"
    )
    path = tmp_path / "demo.yaml"
    path.write_text(text)
    run = ptbench("run", str(path), cwd=tmp_path, timeout=900)
    assert run.returncode == 0, run.stderr
    # Not a terminal: plain progress lines, no control codes, naming each running trial's stage and,
    # during solve, the TRL trainer's step count read from agent/native.log and the budget left.
    assert "\x1b" not in run.stdout and "\r" not in run.stdout
    steps = re.findall(
        r"reference__tiny-llama__arithmetic__s\d: solve \(step (\d+)/3000, 0:\d\d:\d\d left\)", run.stdout
    )
    assert steps and max(int(s) for s in steps) > 0, run.stdout[:3000]
    assert re.search(r"base-model__tiny-llama__arithmetic__s\d: evaluate$", run.stdout, re.M), run.stdout[:3000]
    logs = sorted((tmp_path / "results" / "demo" / "logs").glob("*.log"))
    assert len(logs) == 4 and all("recorded completed" in p.read_text() for p in logs)  # what each runner printed
    rows = [json.loads(p.read_text()) for p in sorted((tmp_path / "results" / "demo").glob("*/result.json"))]
    assert len(rows) == 4
    scores: dict[str, list[float]] = {}
    for r in rows:
        assert r["status"] == "completed", r
        assert r["integrity"] == {
            "api_usage": "clean",
            "contamination": "clean",
            "memorization": "clean",
            "model_identity": "clean",
        }, r  # honest runs
        scores.setdefault(r["agent"]["label"], []).append(r["primary_metric"]["value"])
    assert len(scores["base-model"]) == len(scores["reference"]) == 2
    # Converged, not merely ahead: every seed near 100 % (a model still learning lands anywhere between
    # seeds and CPUs, which is what made the table differ between machines), the random base model near 0.
    assert min(scores["reference"]) >= 0.97, scores
    assert max(scores["base-model"]) <= 0.02, scores
    assert "| reference [unsandboxed] |" in run.stdout  # the demo asks for sandbox: none, and every table says so

    # running it again runs nothing and prints the table
    again = ptbench("run", str(path), cwd=tmp_path)
    assert "nothing to run" in again.stdout and "| reference [unsandboxed] |" in again.stdout
