"""`ptbench export harbor`: the task directories are loaded by the real `harbor` package (in its own
Python 3.12 venv, .venv-harbor, built by scripts/install.sh test) with no unknown keys; the verifier
is tested in test_harbor_verify.py; here: what the export writes for it (its configuration, which
only tests/ holds).
"""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.conftest import REPO, ptbench
from tests.support import require

HARBOR_PY = Path(os.environ.get("PTBENCH_HARBOR_VENV", REPO / ".venv-harbor")) / "bin" / "python"
CHECK = REPO / "scripts" / "harbor_check_tasks.py"

CAMPAIGN = """
name: cloud
agents: [base-model]
base_models:
  - {id: Qwen/Qwen3-1.7B-Base, revision: 0123abc, label: qwen3-1.7b}
  - {id: local/tiny, path: "@MODEL@", label: tiny}
tasks: [gsm8k, {name: arithmetic, options: {n_test: 4}}]
seeds: [0, 1]
budget: {hours: 10, gpus: 1, gpu_type: H100, eval_minutes: 30}
evaluation: {engine: transformers, limit: 4}
results_dir: "@RESULTS@"
"""


def harbor_check(out: Path) -> subprocess.CompletedProcess:
    require(
        HARBOR_PY.exists(), f"{HARBOR_PY} missing: bash scripts/install.sh test builds the harbor venv (Python 3.12)"
    )
    return subprocess.run([str(HARBOR_PY), str(CHECK), str(out)], capture_output=True, text=True, timeout=300)


@pytest.fixture
def exported(write_campaign, tmp_path) -> Path:
    out = tmp_path / "harbor"
    empty = tmp_path / "hf"  # no test set in any cache: only the generated one can be pinned at export
    env = {
        "HF_HOME": str(empty),
        "HF_HUB_CACHE": str(empty / "hub"),
        "HF_DATASETS_CACHE": str(empty / "datasets"),
        "PTBENCH_DATA_DIR": "",
    }
    run = ptbench("export", "harbor", str(write_campaign(CAMPAIGN)), str(out), cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stderr
    # the default checks include api_usage, which needs a trajectory no Harbor verifier receives
    assert "warning: integrity check api_usage needs the agent's trajectory" in run.stderr
    return out


def test_every_task_loads_in_harbor_without_unknown_keys_and_a_bad_one_fails(exported):
    tasks = sorted(p.name for p in exported.iterdir())
    assert tasks == [
        "qwen3-1.7b__arithmetic",
        "qwen3-1.7b__gsm8k",
        "tiny__arithmetic",
        "tiny__gsm8k",
    ]  # per (base, task), not per seed
    t = exported / "qwen3-1.7b__gsm8k"
    cfg = tomllib.loads((t / "task.toml").read_text())
    # the verifier: two evaluations (the model's, the base's for a fallback), four 20-minute checks
    # (contamination, memorization, model_identity, api_usage: the defaults), 30 min of downloads
    assert cfg["agent"]["timeout_sec"] == 36000.0 and cfg["verifier"]["timeout_sec"] == 2 * 1800 + 4 * 1200 + 1800
    # Harbor empties each artifact's path before uploading it into the verifier: the workspace must come first
    assert [a["source"] for a in cfg["artifacts"]] == ["/app", "/app/final_model"]
    spec = json.loads((t / "tests" / "trial.json").read_text())
    assert spec["agent"]["name"] == "harbor" and spec["base_model"] == {
        "id": "Qwen/Qwen3-1.7B-Base",
        "revision": "0123abc",
        "path": None,
        "label": "qwen3-1.7b",
    }
    verify = json.loads((t / "tests" / "verify.json").read_text())
    assert (
        verify["scoring_policy"] == "base_fallback"
        and verify["test_set"] is None
        and "not pinned" in verify["test_set_note"]
    )  # offline here
    pinned = json.loads((exported / "tiny__arithmetic" / "tests" / "verify.json").read_text())["test_set"]
    assert pinned["n"] == 4 and len(pinned["sha256"]) == 64  # a generated test set is pinned at export
    test_sh = (t / "tests" / "test.sh").read_text()
    assert (
        "cd /tmp" in test_sh
        and "python -I -m ptbench.export.harbor_verify /tests /app/final_model /app /logs/verifier" in test_sh
    )
    assert cfg["environment"]["gpus"] == 1 and cfg["environment"]["gpu_types"] == ["H100"]
    assert "36000" in cfg["environment"]["healthcheck"]["command"]  # timer.sh's deadline
    instruction = (t / "instruction.md").read_text()
    assert (
        "Qwen/Qwen3-1.7B-Base" in instruction
        and "`/app/final_model/`" in instruction
        and "bash timer.sh" in instruction
    )
    assert "/tmp" not in instruction  # no path of this machine leaks into a cloud task
    dockerfile = (t / "environment" / "Dockerfile").read_text()
    assert "@anthropic-ai/claude-code@" in dockerfile and "COPY workspace/ /app/" in dockerfile
    assert "npm" not in (t / "tests" / "Dockerfile").read_text()  # the verifier image has no agent CLIs
    assert (exported / "tiny__arithmetic" / "environment" / "workspace" / "data" / "train.jsonl").stat().st_size > 0

    # two tasks spoiled: a key harbor would silently ignore, and a config harbor rejects
    bad = exported / "qwen3-1.7b__gsm8k" / "task.toml"
    bad.write_text(bad.read_text().replace("[agent]\n", "[agent]\ntimeout = 5\n"))
    broken = exported / "tiny__gsm8k" / "task.toml"
    broken.write_text(broken.read_text().replace('environment_mode = "separate"', 'environment_mode = "shared"'))
    check = harbor_check(exported)
    assert check.returncode == 1, check.stdout + check.stderr
    reports = {r["task"]: r for r in map(json.loads, check.stdout.splitlines())}
    assert reports["qwen3-1.7b__gsm8k"]["problems"] == ["agent.timeout: unknown key for harbor's AgentConfig"]
    assert "harbor could not load it" in reports["tiny__gsm8k"]["problems"][0]
    for clean in ("qwen3-1.7b__arithmetic", "tiny__arithmetic"):  # the exporter's own output: loaded, separate verifier
        assert reports[clean]["problems"] == [] and reports[clean]["verifier"] == "separate"
        assert reports[clean]["name"] == f"ptbench/{clean}" and reports[clean]["instruction_chars"] > 1000


def test_export_refuses_a_non_empty_folder(write_campaign, tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "x").write_text("keep")
    run = ptbench("export", "harbor", str(write_campaign(CAMPAIGN)), str(tmp_path / "out"), cwd=tmp_path)
    assert run.returncode == 2 and "not empty" in run.stderr and (tmp_path / "out" / "x").read_text() == "keep"


def test_export_warns_about_what_a_cloud_verifier_cannot_check(write_campaign, tmp_path):
    from ptbench.export.harbor import harbor_warnings

    campaign = (
        CAMPAIGN.replace("tasks: [gsm8k,", f"tasks: [{{name: gsm8k, options: {{data_path: {tmp_path}}}}},")
        + "integrity: {checks: [contamination, model_identity, judge], judge: {agent: codex, model: m},"
        + " forbidden_models: [/shared/models/instruct, org/instruct]}\n"
    )
    warnings = " | ".join(harbor_warnings(write_campaign(campaign)))
    assert "api_usage" not in warnings and "judge runs an agent CLI" in warnings
    assert "forbidden_models /shared/models/instruct are local folders" in warnings and "org/instruct" not in warnings
    assert "task(s) gsm8k read data_path" in warnings and "local/tiny have a local path" in warnings


def test_harbors_own_upload_into_the_verifier_keeps_final_model(exported, tmp_path):
    """harbor's ArtifactHandler.upload_artifacts (the real code) puts the artifacts into a folder that
    stands in for the verifier container (scripts/harbor_check_upload.py: the environment is the seam).
    It empties each artifact's path before uploading: the exported order keeps final_model/, the
    reverse order (the exporter's before) wipes it."""
    require(
        HARBOR_PY.exists(), f"{HARBOR_PY} missing: bash scripts/install.sh test builds the harbor venv (Python 3.12)"
    )
    host = tmp_path / "collected"  # what Harbor collected from the agent's container
    (host / "workspace" / "data").mkdir(parents=True)
    (host / "workspace" / "timer.sh").write_text("#!/bin/sh\n")
    (host / "workspace" / "data" / "train.jsonl").write_text("{}\n")
    (host / "app" / "final_model").mkdir(parents=True)
    (host / "app" / "final_model" / "config.json").write_text("{}")
    task = exported / "tiny__arithmetic"

    def upload(root: Path, *extra: str) -> list[str]:
        run = subprocess.run(
            [str(HARBOR_PY), str(REPO / "scripts" / "harbor_check_upload.py"), str(task), str(host), str(root), *extra],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert run.returncode == 0, run.stderr[-3000:]
        return run.stdout.split()

    landed = upload(tmp_path / "verifier")
    assert {"app/timer.sh", "app/data/train.jsonl", "app/final_model/config.json"} <= set(landed), landed
    reversed_order = upload(tmp_path / "verifier-reversed", "--reverse")
    assert "app/timer.sh" in reversed_order and "app/final_model/config.json" not in reversed_order
