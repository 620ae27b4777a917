"""Fixtures and helpers for the Slurm backend tests (the cluster fixture is in cluster.py)."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.backends.slurm.cluster import slurm_cluster  # noqa: F401  (the session fixture)


@pytest.fixture
def slurm_campaign(
    tmp_path: Path,
    tiny_model: Path,
    slurm_cluster: str,  # noqa: F811  (the fixture imported above: pytest passes it by name)
) -> Callable[..., Path]:
    """Write a small campaign for the slurm backend; keyword overrides merge into the YAML mapping."""

    def make(name: str = "c", **over) -> Path:
        data = {
            "name": name,
            "agents": [{"name": "slow-copy", "options": {"seconds": 1}}],
            "base_models": [{"id": "local/tiny-llama", "path": str(tiny_model), "label": "tiny"}],
            "tasks": [{"name": "arithmetic", "options": {"digits": 2, "n_test": 8}}],
            "seeds": [0],
            "budget": {"hours": 0.05, "gpus": 0, "grace_seconds": 2, "eval_minutes": 2, "margin_minutes": 1},
            "backend": {"name": "slurm", "options": {"cpus_per_task": 1, "mem_gb": 2, "signal_seconds": 30}},
            "results_dir": str(tmp_path / "results"),
            "parallelism": 2,
            "evaluation": {"engine": "transformers", "limit": 4},
            # The checks that read what the agent left; memorization and model_identity (each loads the
            # models: ~5 s of every job here) are not what these tests are about. The whole default set
            # runs on Slurm in test_slurm_demo.py, as in tests/agents/test_agents_real_trials.py.
            "integrity": {"checks": ["contamination", "api_usage"]},
        }
        for key, value in over.items():
            if isinstance(value, dict) and isinstance(data.get(key), dict):
                data[key] = {**data[key], **value}
            else:
                data[key] = value
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        return path

    return make


def wait_for(check: Callable[[], object], timeout: float, what: str, every: float = 1.0):
    """Poll `check` until it returns something truthy; fail with `what` after `timeout` seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(every)
    pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")


def jobs_of(campaign_dir: Path) -> dict:
    return json.loads((campaign_dir / "jobs.json").read_text())


def slurm_states(job_ids: list[str]) -> dict[str, str]:
    out = subprocess.run(
        ["squeue", "-h", "-r", "-t", "all", "-j", ",".join(sorted({j.split("_")[0] for j in job_ids})), "-o", "%i|%T"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return dict(line.split("|", 1) for line in out.stdout.split())


def results(campaign_dir: Path) -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text()) for p in sorted(campaign_dir.glob("*/result.json"))}


def all_finished(campaign_dir: Path, n: int) -> Callable[[], bool]:
    return lambda: (
        len(list(campaign_dir.glob("*/result.json"))) >= n
        and not any(
            s in ("PENDING", "RUNNING", "COMPLETING")
            for s in slurm_states(list(jobs_of(campaign_dir)["units"].values())).values()
        )
    )
