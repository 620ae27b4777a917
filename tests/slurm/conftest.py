"""The dev Slurm cluster for these tests: started once per session by scripts/slurm-dev-cluster.sh.

Locally, a machine where the cluster cannot start (not root, no Slurm) skips these tests; in CI
(CI=true) they fail instead.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Callable

import pytest
import yaml

from ptbench.testing.fixtures import require

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "slurm-dev-cluster.sh"


def _cluster_conf() -> tuple[str | None, str]:
    for action in ("status", "start"):
        try:
            out = subprocess.run(["bash", str(SCRIPT), action], capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return None, str(exc)
        for line in out.stdout.splitlines():
            if line.startswith("export SLURM_CONF="):
                return line.split("=", 1)[1].strip(), ""
    return None, (out.stderr.strip().splitlines() or ["no output"])[-1]


@pytest.fixture(scope="session")
def slurm_cluster() -> str:
    """SLURM_CONF of the running dev cluster (set in os.environ for the whole session)."""
    conf, why = _cluster_conf()
    require(conf is not None, f"the dev Slurm cluster is not running and could not start: {why}")
    os.environ["SLURM_CONF"] = conf
    return conf


@pytest.fixture
def slurm_campaign(tmp_path: Path, tiny_model: Path, slurm_cluster: str) -> Callable[..., Path]:
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
    out = subprocess.run(["squeue", "-h", "-r", "-t", "all", "-j", ",".join(sorted({j.split('_')[0] for j in job_ids})), "-o", "%i|%T"],
                         capture_output=True, text=True, timeout=60)
    return dict(line.split("|", 1) for line in out.stdout.split())


def results(campaign_dir: Path) -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text()) for p in sorted(campaign_dir.glob("*/result.json"))}


def all_finished(campaign_dir: Path, n: int) -> Callable[[], bool]:
    return lambda: len(list(campaign_dir.glob("*/result.json"))) >= n and not any(
        s in ("PENDING", "RUNNING", "COMPLETING") for s in slurm_states(list(jobs_of(campaign_dir)["trials"].values())).values()
    )
