"""Judged tasks against a scripted local judge: the win-rate and rubric arithmetic equal
hand-computed values, judge failures are counted, past the threshold the evaluation fails, the
cache saves repeat calls, 429 + Retry-After is honoured, and the key is never written down."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ptbench.core.errors import EvaluationFailed
from ptbench.tasks import Example, get_task
from ptbench.tasks.arena_hard_writing import parse_verdict, question_score
from ptbench.tasks.healthbench_easy import bootstrap_stderr, example_score

from .conftest import ARENA_FIXTURE, HEALTHBENCH_FIXTURE, judge_options


def arena(judge, tmp_path, **extra):
    return get_task("arena_hard_writing", **ARENA_FIXTURE, **judge_options(judge, tmp_path, **extra))


def test_arena_arithmetic_matches_hand_computed(judge, tmp_path: Path):
    task = arena(judge, tmp_path)
    examples = task.test_examples()
    assert [e.id for e in examples] == ["aw001", "aw002", "aw003"]  # only creative_writing
    scored = task.score_batch(examples, ["model answer"] * 3)
    # c1: model B wins strongly (3/3), model A wins (1/1) -> 4/4; c2: tie (0.5/1) + loss (0/1) -> 0.25;
    # c3: two strong losses -> 0/6.
    assert scored.scores == [1.0, 0.25, 0.0]
    assert scored.details[0]["verdicts"] == ["B>>A", "A>B"]
    assert scored.settings["judge_calls"] == 6 and scored.settings["judge_failed_calls"] == 0
    assert len(judge.requests) == 6


def test_arena_helpers():
    assert parse_verdict("blah [[A>B]] ... final: [[B>>A]]") == "B>>A"
    assert parse_verdict("no verdict") is None
    assert question_score([("A>>B", "A"), ("A>>B", "B")]) == 0.5
    assert question_score([("A=B", "A"), ("A=B", "B")]) == 0.5


def _writing(case: str, i: int) -> Example:
    return Example(
        id=f"x{i}",
        prompt=[{"role": "user", "content": "q"}],
        reference=f"REFERENCE-ANSWER {i}",
        meta={"question": f"Write something. case={case}"},
    )


def test_judge_failures_counted_per_example_and_threshold_fails(judge, tmp_path: Path):
    examples = [_writing("c1", 0), _writing("c2", 1), _writing("fail", 2), _writing("garbage", 3)]
    with pytest.raises(EvaluationFailed) as info:
        arena(judge, tmp_path).score_batch(examples, ["a"] * 4)
    detail = info.value.detail
    assert (detail["judge_failed_calls"], detail["judge_calls"]) == (4, 8)
    assert (detail["judge_failed_examples"], detail["judge_examples"]) == (2, 4)
    tolerant = arena(judge, tmp_path, judge_failure_threshold=0.6).score_batch(examples, ["a"] * 4)
    assert tolerant.scores == [1.0, 0.25, None, None]
    assert tolerant.settings["judge_failed_calls"] == 4 and tolerant.settings["judge_failed_examples"] == 2
    assert tolerant.settings["judge_errors"] == {"http_500": 2, "unparsable": 2}


def test_cache_saves_repeat_calls_and_retry_after_is_honoured(judge, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("PTBENCH_TEST_JUDGE_KEY", "sk-test-never-written")
    examples = [_writing("ratelimit", 0), _writing("c3", 1)]
    first = arena(judge, tmp_path).score_batch(examples, ["a", "b"])
    assert first.scores == [1.0, 0.0]  # ratelimit case: model wins both games after the 429s
    assert first.settings["judge_retries"] == 2
    sent = len(judge.requests)
    again = arena(judge, tmp_path).score_batch(examples, ["a", "b"])
    assert len(judge.requests) == sent and again.settings["judge_cached"] == 4 and again.scores == first.scores
    assert set(judge.auth) == {"Bearer sk-test-never-written"}
    for f in (tmp_path / "judge-cache").rglob("*"):
        if f.is_file():
            assert "sk-test-never-written" not in f.read_text()
    assert "sk-test-never-written" not in json.dumps(again.settings)


def test_healthbench_rubric_arithmetic(judge, tmp_path: Path):
    task = get_task("healthbench_easy", **HEALTHBENCH_FIXTURE, **judge_options(judge, tmp_path))
    examples = task.test_examples()
    scored = task.score_batch(examples, ["some answer"] * 3)
    # hb001: 5 of 8 positive points; hb002: 4 - 6 < 0 -> clipped to 0; hb003: 8 of 8.
    assert scored.scores == [0.625, 0.0, 1.0]
    assert scored.primary.value == pytest.approx(1.625 / 3) and scored.primary.n == 3
    assert scored.primary.stderr == bootstrap_stderr([0.625, 0.0, 1.0], seed=0)
    assert scored.settings["judge_calls"] == 7


def test_healthbench_helpers_and_failures(judge, tmp_path: Path):
    rubrics = [{"criterion": "a", "points": 2}, {"criterion": "b", "points": -1}, {"criterion": "c", "points": 2}]
    assert example_score(rubrics, [True, True, False]) == 0.25
    assert example_score(rubrics, [False, False, False]) == 0.0
    assert example_score(rubrics, [True, False, True]) == 1.0
    assert bootstrap_stderr([1.0, 1.0, 1.0]) == 0.0
    assert bootstrap_stderr([0.0, 1.0] * 50, seed=1) == pytest.approx(0.05, abs=0.01)
    good = Example(
        id="g",
        prompt=[{"role": "user", "content": "q"}],
        meta={"conversation": [{"role": "user", "content": "q"}]},
        reference=[{"criterion": "ok [met]", "points": 1}],
    )
    bad = Example(
        id="f",
        prompt=[{"role": "user", "content": "q"}],
        meta={"conversation": [{"role": "user", "content": "q"}]},
        reference=[{"criterion": "ok [met]", "points": 1}, {"criterion": "broken [fail]", "points": 1}],
    )
    task = get_task("healthbench_easy", **judge_options(judge, tmp_path, judge_failure_threshold=0.5))
    scored = task.score_batch([good, bad], ["a", "a"])
    assert (
        scored.scores == [1.0, None]
        and scored.settings["judge_failed_calls"] == 1
        and scored.settings["judge_failed_examples"] == 1
    )
    with pytest.raises(EvaluationFailed):  # one of two examples failed: 50% > the default 5%
        get_task("healthbench_easy", **judge_options(judge, tmp_path)).score_batch([good, bad], ["a", "a"])
    with pytest.raises(EvaluationFailed, match="every example failed"):  # even with a threshold of 100%
        get_task("healthbench_easy", **judge_options(judge, tmp_path, judge_failure_threshold=1.0)).score_batch(
            [bad], ["a"]
        )
