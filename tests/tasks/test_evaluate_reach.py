"""Evaluation out of the agent's reach: the agent's evaluate.sh shows scores but writes no test
references into the workspace; the final evaluation uses the harness's cache and template; the
evaluating installation is checked against its distribution RECORD (a real dist-info on a
temporary sys.path entry, then one file changed)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys

import pytest

from ptbench.core.errors import UserError
from ptbench.runner.installation import check_distribution, verify_installation
from tests.conftest import ptbench

from .conftest import FIXTURES

CAMPAIGN = """
name: reach
agents: [{name: self-eval}]
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [{name: gsm8k, options: @OPTIONS@}]
budget: {hours: 1, gpus: 0, eval_minutes: 10}
evaluation: {engine: transformers, batch_size: 4, limit: 2, chat_template: llama3}
results_dir: "@RESULTS@"
"""


@pytest.mark.slow
def test_agents_evaluate_sh_shows_scores_without_references(write_campaign, test_agents, tmp_path):
    options = {"data_path": str(FIXTURES / "gsm8k"), "max_new_tokens": 2}
    path = write_campaign(CAMPAIGN.replace("@OPTIONS@", json.dumps(options)))
    run = ptbench("run", str(path), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    trial = tmp_path / "results" / "reach" / "self-eval__tiny__gsm8k__s0"
    assert json.loads((trial / "result.json").read_text())["status"] == "completed"
    # The agent's run (its workspace moved final_model out; eval_runs stayed) has scores ...
    runs = list((trial / "workspace" / "eval_runs").iterdir())
    assert len(runs) == 1, (trial / "workspace" / "self_eval.log").read_text()
    metrics = json.loads((runs[0] / "metrics.json").read_text())
    assert metrics["primary"]["n"] == 2 and metrics["settings"]["chat_template"]["family"] == "llama3"
    # ... and no references: samples keep only ids, completions and scores.
    rows = [json.loads(line) for line in (runs[0] / "samples.jsonl").read_text().splitlines()]
    assert rows and all(set(r) == {"id", "completion", "finish_reason", "score"} for r in rows)
    # The harness's own evaluation keeps everything, outside the workspace.
    final = [json.loads(line) for line in (trial / "eval" / "samples.jsonl").read_text().splitlines()]
    assert all("reference" in r and "prompt" in r for r in final)
    caches = json.loads((trial / "result.json").read_text())["evaluation"]["caches"]
    assert caches["HF_HUB_CACHE"] == str((trial.parent / ".harness" / "eval-cache" / "hf-hub").resolve())


def test_harness_caches_are_what_huggingface_reads(tmp_path):
    """Test sets load through the harness-only HF caches, not the agent-writable shared one."""
    code = (
        "import sys; from ptbench.runner.eval_stage import use_harness_caches; use_harness_caches(sys.argv[1]); "
        "import huggingface_hub.constants as c, datasets.config as d; print(c.HF_HUB_CACHE); print(d.HF_DATASETS_CACHE)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "ec")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HF_HUB_CACHE": "/agent/writable/hub", "HF_DATASETS_CACHE": "/agent/writable/ds"},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(tmp_path / "ec" / "hf-hub"), str(tmp_path / "ec" / "hf-datasets")]


def _fake_dist(root, name="ptbench_probe"):
    pkg = root / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text("SCORE = 1\n")
    info = root / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    data = (pkg / "__init__.py").read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    (info / "RECORD").write_text(f"{name}/__init__.py,sha256={digest},{len(data)}\n{name}-1.0.dist-info/RECORD,,\n")
    return pkg


def test_installation_checked_against_record(tmp_path, monkeypatch):
    pkg = _fake_dist(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    assert check_distribution("ptbench_probe") == {
        "version": "1.0",
        "files": 1,
        "changed": [],
        "missing": [],
        "editable": False,
    }
    assert verify_installation(("ptbench_probe",)) == {"ptbench_probe": {"version": "1.0", "files_verified": 1}}
    (pkg / "__init__.py").write_text("SCORE = 100  # patched by an agent\n")
    with pytest.raises(UserError, match="ptbench_probe: ptbench_probe/__init__.py changed"):
        verify_installation(("ptbench_probe",))
    (pkg / "__init__.py").unlink()
    assert check_distribution("ptbench_probe")["missing"] == ["ptbench_probe/__init__.py"]
    assert check_distribution("no-such-distribution") is None
