"""Several judges on judged tasks, against the scripted local judge with one contrarian judge that
always disagrees: the scores are the mean over judges and the agreement (percent, Cohen's kappa for
two judges, Fleiss' kappa for three) equals the hand-computed values."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptbench.core.errors import EvaluationFailed, UserError
from ptbench.tasks import get_task

from .conftest import ARENA_FIXTURE, HEALTHBENCH_FIXTURE, judge_options

THREE = ["judge-1", "judge-2", "contrarian"]


def several(judge, tmp_path: Path, models: list[str], **extra) -> dict:
    options = judge_options(judge, tmp_path, **extra)
    del options["judge_model"]
    judge.contrarians = {"contrarian"}
    return {**options, "judge_models": models}


def test_healthbench_three_judges_one_contrarian(judge, tmp_path: Path):
    task = get_task("healthbench_easy", **HEALTHBENCH_FIXTURE, **several(judge, tmp_path, THREE))
    scored = task.score_batch(task.test_examples(), ["an answer"] * 3)
    # agreeing judges: 5/8, clipped 0, 8/8; the contrarian: (3-4)/8 -> 0, 0, 0. Mean over the three:
    assert scored.scores == pytest.approx([1.25 / 3, 0.0, 2 / 3])
    assert scored.primary.value == pytest.approx((1.25 / 3 + 2 / 3) / 3)
    assert scored.details[0]["score_by_judge"] == {"judge-1": 0.625, "judge-2": 0.625, "contrarian": 0.0}
    assert {b["model"] for b in judge.requests} == set(THREE) and len(judge.requests) == 21
    # 7 criteria, each 2 of 3 judges agree (P-bar 1/3); 12 "met" of 21 -> P_e = 25/49; kappa = -13/36
    a = scored.settings["judge_agreement"]
    assert a == {
        "judges": 3,
        "items": 7,
        "percent_agreement": pytest.approx(1 / 3),
        "kappa": pytest.approx(-13 / 36),
        "kappa_kind": "fleiss",
    }
    assert scored.extra["judge_kappa"] == pytest.approx(-13 / 36) and scored.extra["judge_count"] == 3
    assert scored.extra["judge_agreement"] == pytest.approx(1 / 3)
    assert scored.settings["judges"] == THREE and scored.settings["judge_calls"] == 21


def test_healthbench_two_judges_is_cohen(judge, tmp_path: Path):
    task = get_task("healthbench_easy", **HEALTHBENCH_FIXTURE, **several(judge, tmp_path, ["judge-1", "contrarian"]))
    scored = task.score_batch(task.test_examples(), ["an answer"] * 3)
    # never agree: p_o 0; marginals 5/7 met vs 2/7 met -> p_e 20/49; kappa = -20/29
    assert scored.extra["judge_kappa_kind"] == "cohen"
    assert scored.extra["judge_kappa"] == pytest.approx(-20 / 29) and scored.extra["judge_agreement"] == 0.0


def test_arena_three_judges_one_contrarian(judge, tmp_path: Path):
    task = get_task("arena_hard_writing", **ARENA_FIXTURE, **several(judge, tmp_path, THREE))
    scored = task.score_batch(task.test_examples(), ["model answer"] * 3)
    # agreeing judges: 1.0, 0.25, 0.0; the contrarian (mirrored verdicts): 0.0, 0.75, 1.0
    assert scored.scores == pytest.approx([2 / 3, 1.25 / 3, 1 / 3])
    assert scored.details[1]["verdicts_by_judge"]["contrarian"] == ["B=A", "A>B"]
    # 6 games: the c2 tie is unanimous, 5 games 2-of-3 -> P-bar 4/9; category shares 5,4,3,3,3 of 18
    # -> P_e = 68/324 = 17/81; kappa = (4/9 - 17/81) / (64/81) = 19/64
    a = scored.settings["judge_agreement"]
    assert a["items"] == 6 and a["percent_agreement"] == pytest.approx(4 / 9)
    assert a["kappa"] == pytest.approx(19 / 64)


def test_one_judge_records_no_agreement_and_options_are_checked(judge, tmp_path: Path, monkeypatch):
    single = get_task("healthbench_easy", **HEALTHBENCH_FIXTURE, **judge_options(judge, tmp_path))
    scored = single.score_batch(single.test_examples(), ["an answer"] * 3)
    assert "judge_agreement" not in scored.settings and "judge_kappa" not in scored.extra
    assert "judges" not in scored.settings
    with pytest.raises(UserError, match="not both"):
        get_task("healthbench_easy", **{**judge_options(judge, tmp_path), "judge_models": ["a", "b"]})
    with pytest.raises(UserError, match="twice"):
        get_task("healthbench_easy", **several(judge, tmp_path, ["a", "a"]))
    with pytest.raises(UserError, match="non-empty list"):
        get_task("healthbench_easy", **several(judge, tmp_path, []))
    # every judge's key is checked before generation
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    hosted = get_task(
        "healthbench_easy", judge_models=["gpt-5-mini", "o4-mini"], judge_base_url="https://api.openai.com/v1"
    )
    with pytest.raises(UserError, match="gpt-5-mini"):
        hosted.preflight()


def test_a_judge_failing_fails_the_example(judge, tmp_path: Path):
    """One judge that cannot answer makes the example failed: never a mean over fewer judges."""
    task = get_task(
        "healthbench_easy",
        **HEALTHBENCH_FIXTURE,
        **several(judge, tmp_path, ["judge-1", "judge-2"], judge_failure_threshold=1.0),
    )
    examples = task.test_examples()
    judge.fail_first = 21  # judges ask in turn: judge-1's 7 calls x 3 attempts all fail, judge-2 answers
    with pytest.raises(EvaluationFailed, match="every example failed") as info:
        task.score_batch(examples, ["an answer"] * 3)
    assert info.value.detail["judge_failed_calls"] == 7 and info.value.detail["judge_calls"] == 14


@pytest.mark.slow
def test_evaluate_writes_agreement_into_metrics(judge, tmp_path: Path, tiny_model):
    """`evaluate` with the tiny model through transformers: the agreement lands in metrics.json's
    `extra` (which the runner copies into result.json's extra_metrics) and the judges in settings."""
    import json

    from ptbench.inference.hf import TransformersEngine
    from ptbench.tasks.evaluate import evaluate

    options = {**HEALTHBENCH_FIXTURE, "max_new_tokens": 8, **several(judge, tmp_path, THREE)}
    out = tmp_path / "eval"
    evaluate("healthbench_easy", str(tiny_model), out, task_options=options, engine=TransformersEngine(str(tiny_model)))
    metrics = json.loads((out / "metrics.json").read_text())
    # the scripted grades do not depend on the answer: the same kappa as computed by hand above
    assert metrics["extra"]["judge_kappa"] == pytest.approx(-13 / 36) and metrics["extra"]["judge_count"] == 3
    assert metrics["settings"]["judges"] == THREE
    assert metrics["primary"]["value"] == pytest.approx((1.25 / 3 + 2 / 3) / 3)


def test_the_trial_gateway_judge_route_allows_every_listed_judge(monkeypatch):
    """The agent's own evaluate.sh judges through the trial gateway: its judge route must let each
    listed judge model through and no other. (The trial is a stand-in holding only the task spec
    `_judge_upstream` reads: building a whole trial adds nothing to this check.)"""
    from types import SimpleNamespace

    from ptbench.launch.trial_gateway import _judge_upstream

    monkeypatch.setenv("OPENAI_API_KEY", "sk-judge-route-test")
    task = SimpleNamespace(name="healthbench_easy", options={"judge_models": ["gpt-5-mini", "o4-mini"]})
    keep: set[str] = set()
    upstream = _judge_upstream(SimpleNamespace(spec=SimpleNamespace(task=task)), {}, keep)
    assert upstream is not None and upstream.models == {"gpt-5-mini": "gpt-5-mini", "o4-mini": "o4-mini"}
    assert keep == {"OPENAI_API_KEY"}
