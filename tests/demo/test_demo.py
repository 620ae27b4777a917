"""Acceptance: the demo campaign, as the quickstart runs it, shows reference clearly above base-model."""

from __future__ import annotations

import json

import pytest

from tests.conftest import REPO, ptbench

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_demo_campaign_reference_beats_base_model(tiny_model, tmp_path):
    text = (REPO / "campaigns" / "demo.yaml").read_text()
    text = text.replace("path: .cache/tiny-llama", f"path: {tiny_model}").replace(
        "results_dir: results", f"results_dir: {tmp_path / 'results'}"
    )
    path = tmp_path / "demo.yaml"
    path.write_text(text)
    run = ptbench("run", str(path), cwd=tmp_path, timeout=900)
    assert run.returncode == 0, run.stderr
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
    base = sum(scores["base-model"]) / 2
    reference = sum(scores["reference"]) / 2
    assert reference >= base + 0.10, (base, reference)
    assert "| reference [unsandboxed] |" in run.stdout  # the demo asks for sandbox: none, and every table says so

    # running it again runs nothing and prints the table
    again = ptbench("run", str(path), cwd=tmp_path)
    assert "nothing to run" in again.stdout and "| reference [unsandboxed] |" in again.stdout
