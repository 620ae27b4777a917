"""A benchmark from a third-party package (tests/plugins/ptbench-toy, `toy_parity`) runs a real
campaign: installed with pip beside ptbench (its entry point, no ptbench file edited), `validate`
accepts it, the local backend runs the zero-shot baseline agent on the tiny model, and the result is
scored by the toy's own scorer, with the toy's own facts (brief, token phases, memorization siblings)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ptbench
from tests.support import install_plugin_package

CAMPAIGN = """
name: toy
agents: [{name: base-model}]
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [{name: toy_parity, options: {n_test: 24}}]
seeds: [0]
budget: {hours: 1, gpus: 0, grace_seconds: 2, eval_minutes: 5}
backend: local
sandbox: none
results_dir: "@RESULTS@"
evaluation: {engine: transformers}
integrity: {checks: [contamination, memorization]}
"""


@pytest.fixture(scope="module")
def toy_env(tmp_path_factory) -> dict[str, str]:
    return install_plugin_package(tmp_path_factory.mktemp("toy"))


def _in_toy(env: dict[str, str], code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_validate_knows_the_plugin_benchmark_and_its_options(toy_env, write_campaign, tmp_path: Path) -> None:
    good = write_campaign(CAMPAIGN)
    out = ptbench("validate", str(good), env=toy_env)
    assert out.returncode == 0, out.stdout + out.stderr
    # a bad option of the plugin's task is the usual one line, exit 2
    bad = write_campaign(CAMPAIGN.replace("n_test: 24", "n_test: 9999"), name="bad.yaml")
    out = ptbench("validate", str(bad), env=toy_env)
    assert out.returncode == 2 and "n_test" in out.stdout + out.stderr
    # without the package installed the name is unknown: the plugin is what makes it exist
    out = ptbench("validate", str(good))
    assert out.returncode == 2 and "toy_parity" in out.stdout + out.stderr


@pytest.mark.slow
@pytest.mark.integration
def test_a_campaign_on_the_plugin_benchmark_is_scored_by_its_own_scorer(toy_env, write_campaign, tmp_path) -> None:
    run = ptbench("run", str(write_campaign(CAMPAIGN)), cwd=tmp_path, env=toy_env, timeout=1200)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    (result_file,) = (tmp_path / "results").glob("*/*/result.json")
    trial = result_file.parent
    result = json.loads(result_file.read_text())
    assert result["status"] == "completed" and result["task"]["name"] == "toy_parity"
    assert result["primary_metric"]["name"] == "parity_accuracy" and result["primary_metric"]["n"] == 24
    # The recorded value is the toy scorer's mean over the completions the evaluation kept, rescored
    # here by the plugin's own class (in a process that sees the package).
    (samples,) = trial.rglob("samples.jsonl")
    rows = [json.loads(line) for line in samples.read_text().splitlines()]
    (tmp_path / "rows.json").write_text(json.dumps(rows))
    rescore = (
        "import json\n"
        "from ptbench.tasks import get_task\n"
        "t = get_task('toy_parity', n_test=24)\n"
        "ex = {e.id: e for e in t.test_examples()}\n"
        f"rows = json.load(open({str(tmp_path / 'rows.json')!r}))\n"
        "print(json.dumps([[t.score(ex[r['id']], r[k]) for r in rows] for k in ('completion', 'reference')]))\n"
    )
    rescored, right = json.loads(_in_toy(toy_env, rescore))
    assert rescored == [r["score"] for r in rows] and len(rows) == 24
    assert right == [1.0] * 24  # the same scorer pays right answers: the recorded scores are the model's
    metrics = json.loads((trial / "eval" / "metrics.json").read_text())
    assert [p["max_new_tokens"] for p in metrics["settings"]["phases"]] == [4]  # the toy's token_phases
    assert result["primary_metric"]["value"] == pytest.approx(sum(rescored) / len(rescored))
    # The agent was told the toy's own brief; the memorization check used the toy's sibling source.
    prompt = next(trial.rglob("prompt.txt")).read_text()
    assert "8-bit string holds an even or odd number of ones" in prompt
    memo = json.loads(next(trial.rglob("memorization.json")).read_text())
    assert "toy_parity reserve strings" in json.dumps(memo), memo
