"""The demo campaign's TRL reference recipe (50 steps, two seeds) on the dev Slurm cluster, next to
the same campaign run locally: one job array, and the same results, bit for bit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.backends.slurm.conftest import all_finished, jobs_of, results, wait_for
from tests.conftest import REPO, ptbench

pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.integration]

# What must agree between backends; provenance (host, scheduler, job id), timings and finish times differ by design.
_SAME = (
    "status",
    "failure",
    "primary_metric",
    "extra_metrics",
    "agent",
    "base_model",
    "task",
    "seed",
    "integrity",
    "evaluation",
)


def _content(result: dict) -> dict:
    same = {k: result[k] for k in _SAME}
    same["evaluation"].pop("caches", None)  # each campaign's own harness-only cache folder
    for phase in same["evaluation"].get("phases", []):
        phase.pop("seconds", None)
    return same


def _demo(tmp_path: Path, tiny_model: Path, name: str) -> Path:
    data = yaml.safe_load((REPO / "campaigns" / "demo.yaml").read_text())
    data["name"] = name
    data["base_models"][0]["path"] = str(tiny_model)
    # The reference recipe only (two seeds: still an array): the base-model agent's trials (a copy of the
    # base) add nothing a scheduler could change, and the demo test runs them.
    data["agents"] = [{"name": "reference", "options": {"max_steps": 50}}]
    data["tasks"][0]["options"]["n_test"] = 50
    data["results_dir"] = str(tmp_path / "results")
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_demo_on_slurm_matches_local(tmp_path: Path, tiny_model: Path, slurm_cluster: str, monkeypatch) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # same threads on both backends, so training is bit-for-bit the same
    local = ptbench("run", str(_demo(tmp_path, tiny_model, "demo-local")), timeout=1200)
    assert local.returncode == 0, local.stdout[-2000:] + local.stderr[-2000:]

    camp = _demo(tmp_path, tiny_model, "demo-slurm")
    res = ptbench("submit", str(camp), "--backend", "slurm")
    assert res.returncode == 0, res.stderr
    cdir = tmp_path / "results" / "demo-slurm"
    jobs = jobs_of(cdir)
    assert len(jobs["submissions"]) == 1 and len({j.split("_")[0] for j in jobs["units"].values()}) == 1  # one array
    assert len(jobs["units"]) == 2
    wait_for(all_finished(cdir, 2), 1200, "the demo array to finish", every=5)

    on_local, on_slurm = results(tmp_path / "results" / "demo-local"), results(cdir)
    assert sorted(on_local) == sorted(on_slurm)
    for tid, r in on_slurm.items():
        assert r["provenance"]["scheduler"] == "slurm" and r["provenance"]["job_id"] == jobs["units"][tid]
        assert set(r) == set(on_local[tid])  # same shape
        assert _content(r) == _content(on_local[tid]), tid
        # the trained (or copied) model answered every test question the same way on both backends
        assert (cdir / tid / "eval" / "samples.jsonl").read_text() == (
            tmp_path / "results" / "demo-local" / tid / "eval" / "samples.jsonl"
        ).read_text()
    assert {r["status"] for r in on_slurm.values()} == {"completed"}
    status = ptbench("status", str(cdir), env={"COLUMNS": "300"}).stdout
    assert "2 completed" in status
    table = json.loads((tmp_path / "results" / "demo-local" / "tables" / "results.json").read_text())
    assert len(table["trials"]) == 2  # the collation lists the 2 trials
