"""The Harbor verifier (`ptbench.export.harbor_verify`, what an exported task's tests/test.sh runs)
runs the runner's integrity checks and evaluation and pays the reward the collator's policy gives.

Harbor's verifier container is laid out here as Harbor lays it out: the task's tests/ folder, the
agent's workspace as /app (here tmp/app) with /app/final_model, and the verifier's own models cache
(HF hub layout, seeded with the tiny models; HF_HUB_OFFLINE=1, so nothing is downloaded). Docker
cannot run here, so the verifier runs as test.sh runs it, `python -I`, with this checkout's source
put on sys.path by hand (-I ignores PYTHONPATH) and the agent's /app as working directory. Models:
the session's random tiny Llama as the base, another seed of it as the base's "instruct" version
(a forbidden model, by hub id), and a fine-tune stand-in (the base plus small noise).
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ptbench.export.harbor_trial import model_problem
from ptbench.export.harbor_verify import _test_set_problem, reward_for
from ptbench.results.policy import choose_rule
from tests.conftest import REPO, ptbench

CAMPAIGN = """
name: cloud
agents: [base-model]
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [{name: arithmetic, options: {n_test: 4}}]
budget: {hours: 1, gpus: 1, eval_minutes: 10}
evaluation: {engine: transformers, limit: 4}
integrity: {checks: [contamination, model_identity], forbidden_models: [local/tiny-instruct], check_minutes: 5}
results_dir: "@RESULTS@"
"""
SNAPSHOT = "0" * 40
BASE_SCORE = 0.25  # the campaign's base-model trial: what the collator pays a base fallback


def _base_model_trial(campaign_dir: Path, value: float) -> None:
    """A finished `base-model` agent trial of the campaign (the base handed back unchanged), as the
    runner records it."""
    from ptbench.results.schema import (
        AgentInfo,
        BaseModelInfo,
        BudgetUsed,
        Metric,
        Provenance,
        ResultRecord,
        TaskInfo,
    )

    record = ResultRecord(
        campaign="cloud",
        trial_id="base-model__tiny__arithmetic__s0",
        agent=AgentInfo(name="base-model", label="base-model"),
        base_model=BaseModelInfo(id="local/tiny", label="tiny"),
        task=TaskInfo(name="arithmetic", label="arithmetic"),
        seed=0,
        status="completed",
        budget=BudgetUsed(hours=1, gpus=1),
        primary_metric=Metric(name="accuracy", value=value, n=4),
        integrity={"contamination": "clean"},
        provenance=Provenance(ptbench_version="test", host="here", scheduler="local"),
        finished_at=0.0,
    )
    trial = campaign_dir / record.trial_id
    trial.mkdir(parents=True)
    (trial / "result.json").write_text(record.model_dump_json())


def _into_cache(models: Path, repo: str, src: Path) -> None:
    snap = models / "hub" / f"models--{repo.replace('/', '--')}" / "snapshots" / SNAPSHOT
    shutil.copytree(src, snap)


@pytest.fixture(scope="module")
def setup(tiny_model, tmp_path_factory):
    """(the exported task, the verifier's models cache, the models an agent may leave)."""
    import torch
    from safetensors.torch import load_file, save_file

    from ptbench.demo import make_tiny_model

    root = tmp_path_factory.mktemp("harbor-verify")
    _base_model_trial(root / "results" / "cloud", BASE_SCORE)
    campaign = root / "c.yaml"
    campaign.write_text(CAMPAIGN.replace("@MODEL@", str(tiny_model)).replace("@RESULTS@", str(root / "results")))
    run = ptbench("export", "harbor", str(campaign), str(root / "out"), cwd=root)
    assert run.returncode == 0, run.stderr
    instruct = make_tiny_model(root / "instruct", seed=1)
    finetune = root / "finetune"
    shutil.copytree(tiny_model, finetune)
    torch.manual_seed(0)
    weights = load_file(str(tiny_model / "model.safetensors"))
    save_file(
        {k: v + 1e-3 * torch.randn_like(v) for k, v in weights.items()},
        str(finetune / "model.safetensors"),
        metadata={"format": "pt"},
    )
    models = root / "models"
    _into_cache(models, "local/tiny", tiny_model)
    _into_cache(models, "local/tiny-instruct", instruct)
    return root / "out" / "tiny__arithmetic", models, {"finetune": finetune, "instruct": instruct}


def _app(task: Path, tmp_path: Path, model: Path | None) -> Path:
    """The agent's container after its run: the task's workspace, plus what the agent left."""
    app = tmp_path / "app"
    shutil.copytree(task / "environment" / "workspace", app)
    if model is not None:
        shutil.copytree(model, app / "final_model")
    return app


def _tests_without_base_score(task: Path, tmp_path: Path) -> Path:
    """The task's tests/ as exported without a baseline beside the campaign: the verifier evaluates the base itself."""
    tests = tmp_path / "tests"
    shutil.copytree(task / "tests", tests)
    conf = json.loads((tests / "verify.json").read_text())
    (tests / "verify.json").write_text(json.dumps({**conf, "base_score": None}))
    return tests


def _verify(task: Path, models: Path, app: Path, tmp_path: Path, tests: Path | None = None) -> tuple[dict, dict, Path]:
    out = tmp_path / "logs-verifier"
    boot = (
        f"import runpy, sys; sys.path.insert(0, {str(REPO / 'src')!r}); sys.argv = ['harbor_verify', *sys.argv[1:]]; "
        "runpy.run_module('ptbench.export.harbor_verify', run_name='__main__')"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "HF_HUB_OFFLINE": "1",
        "PTBENCH_VERIFIER_MODELS": str(models),
        "PYTHONPATH": str(REPO / "src"),
    }  # for the children, as the image's installed ptbench would be
    run = subprocess.run(
        [sys.executable, "-I", "-c", boot, str(tests or task / "tests"), str(app / "final_model"), str(app), str(out)],
        cwd=app,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads((out / "reward.json").read_text()), json.loads((out / "verdict.json").read_text()), out


def test_an_honest_model_is_checked_and_scored_whatever_the_agent_planted(setup, tmp_path):
    task, models, made = setup
    app = _app(task, tmp_path, made["finetune"])
    # hostile: a ptbench package where the verifier starts (its working directory), forged verdicts
    (app / "ptbench").mkdir()
    (app / "ptbench" / "__init__.py").write_text(
        f"open({str(tmp_path / 'hijacked')!r}, 'w').write('x'); raise SystemExit(7)\n"
    )
    (app / "checks").mkdir()
    (app / "checks" / "verdicts.json").write_text('{"contamination": "clean", "model_identity": "clean"}')
    reward, verdict, out = _verify(task, models, app, tmp_path)
    assert not (tmp_path / "hijacked").exists()  # nothing the agent wrote was imported
    assert verdict["verdicts"] == {"contamination": "clean", "model_identity": "clean"}, verdict["reasons"]
    assert verdict["rule"] == "scored" and verdict["status"] == "completed"
    metrics = json.loads((out / "eval" / "metrics.json").read_text())
    assert metrics["primary"]["n"] == 4 and reward["reward"] == metrics["primary"]["value"] == verdict["own_score"]
    assert metrics["settings"]["test_set"]["sha256"] == verdict["test_set_expected"]["sha256"]  # the exported test set
    assert {
        k: reward[k] for k in ("counted", "flagged", "unchecked", "base_fallback", "nan", "no_model", "eval_failed")
    } == {"counted": 1, "flagged": 0, "unchecked": 0, "base_fallback": 0, "nan": 0, "no_model": 0, "eval_failed": 0}
    identity = json.loads((out / "checks" / "model_identity.json").read_text())
    assert "local/tiny-instruct" in identity["details"]["distance_to_forbidden"]  # compared with the forbidden model
    assert all(isinstance(v, (int, float)) and math.isfinite(v) for v in reward.values())  # what Harbor accepts
    assert set(verdict["seconds"]) == {"references", "checks", "evaluation", "base_evaluation"}
    assert any("trajectory" in n for n in verdict["not_seen"])  # a clean verdict says what it could not see


def test_the_instruct_model_and_a_leaked_test_set_are_flagged_and_paid_the_base_score(setup, tmp_path):
    task, models, made = setup
    app = _app(task, tmp_path, made["instruct"])
    (app / "extra").mkdir()
    (app / "extra" / "more_train.jsonl").write_text(
        "".join(
            json.dumps({"prompt": q, "completion": a}) + "\n"
            for q, a in (("13+54=", "67"), ("26+16=", "42"), ("86+57=", "143"))
        )
    )
    reward, verdict, out = _verify(task, models, app, tmp_path)
    assert verdict["verdicts"] == {"contamination": "flagged", "model_identity": "flagged"}
    assert verdict["rule"] == "base_fallback" and verdict["reason"] == "flagged"
    assert reward["flagged"] == 1 and reward["base_fallback"] == 1 and reward["counted"] == 1
    # paid the base-model trial's score the export found beside the campaign, as the collator would; not its own
    assert (
        reward["reward"] == verdict["base_score"] == BASE_SCORE and "base-model agent" in verdict["base_score_source"]
    )
    assert (
        verdict["own_score"]
        == json.loads((out / "eval" / "metrics.json").read_text())["primary"]["value"]
        != BASE_SCORE
    )
    evidence = json.loads((out / "checks" / "contamination.json").read_text())["evidence"]
    assert {e["file"] for e in evidence} == {"workspace/extra/more_train.jsonl"} and len(
        {e["item_id"] for e in evidence}
    ) == 3
    identity = json.loads((out / "checks" / "model_identity.json").read_text())
    assert identity["evidence"][0]["forbidden"] == "local/tiny-instruct"


def test_a_missing_final_model_is_paid_the_base_score(setup, tmp_path):
    """No baseline was found at export: the verifier evaluates the base model (its own copy) itself."""
    task, models, _ = setup
    reward, verdict, out = _verify(
        task, models, _app(task, tmp_path, None), tmp_path, _tests_without_base_score(task, tmp_path)
    )
    assert verdict["status"] == "no_model" and verdict["rule"] == "base_fallback" and verdict["reason"] == "no_model"
    base = json.loads((out / "base-eval" / "metrics.json").read_text())["primary"]
    assert base["n"] == 4 and "verifier's evaluation of local/tiny" in verdict["base_score_source"]
    assert (
        reward["no_model"] == 1
        and reward["base_fallback"] == 1
        and reward["reward"] == verdict["base_score"] == base["value"]
    )
    assert verdict["verdicts"]["model_identity"] == "unchecked" and not (out / "eval" / "metrics.json").exists()


@pytest.mark.parametrize(
    ("scoring", "integrity", "valid", "verdict", "expected"),
    [
        ("base_fallback", "base_fallback", True, "clean", ("scored", 0.7, 1, 0, 0)),
        ("base_fallback", "base_fallback", True, "flagged", ("base_fallback", 0.2, 1, 1, 0)),
        ("base_fallback", "exclude", True, "unchecked", ("excluded", 0.0, 0, 0, 0)),
        ("base_fallback", "show", True, "flagged", ("shown", 0.7, 1, 0, 0)),
        ("nan", "base_fallback", False, "clean", ("nan", 0.0, 1, 0, 1)),
        (
            "exclude",
            "show",
            False,
            "flagged",
            ("excluded", 0.0, 0, 0, 0),
        ),  # no model: the scoring policy, not the integrity one
    ],
)
def test_the_reward_follows_the_collators_rule(scoring, integrity, valid, verdict, expected):
    rule, _ = choose_rule(valid, verdict, "completed" if valid else "no_model", scoring, integrity)
    rule, value, flags = reward_for(rule, 0.7 if valid else None, 0.2)
    assert (rule, value, flags["counted"], flags["base_fallback"], flags["nan"]) == expected
    assert reward_for("base_fallback", None, None)[:2] == (
        "no_baseline",
        0.0,
    )  # no base score: counted as nan, never as own


def test_a_final_model_that_links_out_is_no_model(tmp_path, tiny_model):
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "model.safetensors").symlink_to(tiny_model / "model.safetensors")
    assert "links outside" in model_problem(linked)
    (tmp_path / "whole").symlink_to(tiny_model)
    assert "is a link" in model_problem(tmp_path / "whole")
    inside = tmp_path / "inside"
    shutil.copytree(tiny_model, inside)
    (inside / "alias.json").symlink_to(inside / "config.json")
    assert model_problem(inside) is None and model_problem(tmp_path / "none") == "no final_model/"


def test_a_score_over_another_test_set_than_the_exported_one_is_refused():
    expected = {"sha256": "a" * 64, "n": 4}
    assert _test_set_problem({"settings": {"test_set": {"sha256": "a" * 64, "n": 4}}}, expected) is None
    assert "is not the one exported" in _test_set_problem(
        {"settings": {"test_set": {"sha256": "b" * 64, "n": 4}}}, expected
    )
    assert "is not the one exported" in _test_set_problem(
        {"settings": {}}, expected
    )  # an unrecorded test set is not a match
    assert _test_set_problem({}, None) is None  # not pinned at export: nothing to compare (verify.json says why)


def test_a_reference_at_another_revision_than_the_pinned_one_is_not_taken_for_it(tmp_path, monkeypatch):
    from ptbench.export.harbor_trial import fetch_references
    from ptbench.spec.campaign import AgentRef, BaseModelRef, Budget, TaskRef
    from ptbench.trial import TrialSpec

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    snap = tmp_path / "hub" / "models--org--base" / "snapshots" / ("1" * 40)
    snap.mkdir(parents=True)
    (snap / "config.json").write_text("{}")

    def fetched(revision):
        spec = TrialSpec(
            campaign="c",
            trial_id="t",
            agent=AgentRef(name="harbor"),
            base_model=BaseModelRef(id="org/base", revision=revision),
            task=TaskRef(name="arithmetic"),
            seed=0,
            budget=Budget(hours=1, gpus=0),
        )
        return fetch_references(spec, tmp_path)["org/base"]

    assert fetched("1" * 40).startswith("in the verifier's cache") and fetched(None).startswith(
        "in the verifier's cache"
    )
    assert fetched("2" * 40).startswith(f"revision {'2' * 40} missing, found {'1' * 40}")
