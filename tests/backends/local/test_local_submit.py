"""`ptbench submit` on the local backend runs the campaign here with the plan it just made (the
same path as `ptbench run`, through `LocalBackend.runs_here`, not a second validate-and-plan), and
writes no jobs.json: a later `submit` of the finished campaign has nothing to do."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import ptbench


def test_submit_on_the_local_backend_runs_here(tmp_path: Path, write_campaign, test_agents) -> None:
    camp = write_campaign(
        """
        name: loc
        agents: [{name: slow-copy, options: {seconds: 1}}]
        base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
        tasks: [{name: arithmetic, options: {digits: 1, n_test: 4}}]
        seeds: [0]
        budget: {hours: 0.05, gpus: 0, grace_seconds: 2, eval_minutes: 2, margin_minutes: 1}
        backend: {name: local}
        results_dir: "@RESULTS@"
        evaluation: {engine: transformers, limit: 2}
        """
    )
    res = ptbench("submit", str(camp), timeout=900)
    assert res.returncode == 0, res.stdout + res.stderr
    cdir = tmp_path / "results" / "loc"
    (trial,) = [p for p in cdir.iterdir() if (p / "trial.json").exists()]
    assert (trial / "result.json").exists() and "completed" in res.stdout
    assert not (cdir / "jobs.json").exists()
    again = ptbench("submit", str(camp))
    assert again.returncode == 0 and "nothing to run" in again.stdout, again.stdout + again.stderr
