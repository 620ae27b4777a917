"""Judge failures are counted per example, and evaluation retries in token phases.

Against the scripted judge (a real HTTP server) and, for the trial-level cases, the real runner
(`ptbench run` on the local backend, the quick-copy agent, the tiny model through transformers):

- one failed rubric call in each of several examples fails the evaluation even though only 2% of
  the calls failed (the hole the per-call threshold left open);
- every example failing fails it whatever the threshold;
- below the threshold the trial completes, with failed calls and failed examples recorded apart;
- an evaluation whose first two phases fail (a judge outage) succeeds in phase 3, all recorded.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ptbench.core.errors import EvaluationFailed
from ptbench.tasks import get_task
from ptbench.tasks.evaluate import evaluate
from tests.conftest import ptbench
from tests.tasks.conftest import HEALTHBENCH_FIXTURE, judge_options


def write_healthbench(folder: Path, n: int, rubrics: int, failing: set[int]) -> dict:
    """n examples in HealthBench's official schema; in the examples of `failing` one criterion of
    `rubrics` makes the scripted judge fail. Returns the task options that select them."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for i in range(n):
        items = [
            {
                "criterion": f"Criterion {k} [{'fail' if (i in failing and k == 0) else 'met' if k % 2 else 'unmet'}]",
                "points": 2,
                "tags": ["level:example", "axis:accuracy"],
            }
            for k in range(rubrics)
        ]
        rows.append(
            {
                "prompt_id": f"p{i:03d}",
                "prompt": [{"role": "user", "content": f"Question {i}?"}],
                "rubrics": items,
                "example_tags": ["theme:test"],
                "ideal_completions_data": None,
            }
        )
    (folder / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "ids.txt").write_text("".join(r["prompt_id"] + "\n" for r in rows))
    return {"data_path": str(folder / "data.jsonl"), "subset_ids": str(folder / "ids.txt")}


def _task(judge, tmp_path, data, **extra):
    return get_task("healthbench_easy", **data, **judge_options(judge, tmp_path, **extra))


def test_one_failed_call_in_each_of_many_examples_fails_the_evaluation(judge, tmp_path):
    data = write_healthbench(tmp_path / "hb", n=20, rubrics=10, failing={1, 5, 9, 13})
    task = _task(judge, tmp_path, data)
    examples = task.test_examples()
    with pytest.raises(EvaluationFailed) as info:
        task.score_batch(examples, ["answer"] * 20)
    d = info.value.detail
    assert (d["judge_failed_calls"], d["judge_calls"]) == (4, 200)  # 2% of calls: the old check passed this
    assert (d["judge_failed_examples"], d["judge_examples"]) == (4, 20)  # 20% of examples
    assert "4 of 20 examples" in str(info.value)


def test_every_example_failing_fails_whatever_the_threshold(judge, tmp_path):
    data = write_healthbench(tmp_path / "hb", n=6, rubrics=10, failing=set(range(6)))
    task = _task(judge, tmp_path, data, judge_failure_threshold=1.0)
    with pytest.raises(EvaluationFailed, match="every example failed") as info:
        task.score_batch(task.test_examples(), ["answer"] * 6)
    assert info.value.detail["judge_failed_examples"] == 6 and info.value.detail["judge_failed_calls"] == 6


def test_below_the_threshold_scores_the_rest_and_records_both_counts(judge, tmp_path):
    data = write_healthbench(tmp_path / "hb", n=40, rubrics=2, failing={7})
    task = _task(judge, tmp_path, data)
    scored = task.score_batch(task.test_examples(), ["answer"] * 40)
    assert scored.scores.count(None) == 1 and scored.scores[7] is None
    assert scored.primary.n == 39 and scored.primary.value == pytest.approx(0.5)  # one of two 2-point criteria met
    assert (scored.extra["judge_failed_examples"], scored.extra["judge_examples"]) == (1, 40)
    assert (scored.extra["judge_failed_calls"], scored.extra["judge_calls"]) == (1, 80)


CAMPAIGN = """
name: jf
agents: [{name: quick-copy}]
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks:
  - {name: healthbench_easy, label: spread, options: @SPREAD@}
  - {name: healthbench_easy, label: below, options: @BELOW@}
budget: {hours: 1, gpus: 0, eval_minutes: 10}
evaluation: {engine: transformers, batch_size: 16, chat_template: llama3}
results_dir: "@RESULTS@"
parallelism: 1
"""


@pytest.mark.slow
def test_runner_records_eval_failed_not_completed_and_counts_below_threshold(
    judge, write_campaign, test_agents, tmp_path
):
    common = {"max_new_tokens": 4, **judge_options(judge, tmp_path, judge_max_retries=0)}
    del common["judge_cache_dir"]  # the runner's default: the campaign's harness-only cache
    spread = {
        **write_healthbench(tmp_path / "spread", n=10, rubrics=5, failing={0, 4}),
        **common,
    }  # 4% of calls, 20% of examples
    below = {**write_healthbench(tmp_path / "below", n=40, rubrics=1, failing={3}), **common}
    path = write_campaign(CAMPAIGN.replace("@SPREAD@", json.dumps(spread)).replace("@BELOW@", json.dumps(below)))
    run = ptbench("run", str(path), cwd=tmp_path)
    assert run.returncode == 1, run.stderr  # one trial's evaluation failed: not every result is scored
    trials = tmp_path / "results" / "jf"
    failed = json.loads((trials / "quick-copy__tiny__spread__s0" / "result.json").read_text())
    assert failed["status"] == "eval_failed" and failed["primary_metric"] is None
    assert failed["failure"]["retryable"] is True and failed["failure"]["stage"] == "evaluate"
    assert failed["extra_metrics"]["judge_failed_examples"] == 2 and failed["extra_metrics"]["judge_failed_calls"] == 2
    assert failed["extra_metrics"]["judge_calls"] == 50
    assert [p["ok"] for p in failed["evaluation"]["phases"]] == [False]
    ok = json.loads((trials / "quick-copy__tiny__below__s0" / "result.json").read_text())
    assert ok["status"] == "completed" and ok["primary_metric"]["n"] == 39
    assert ok["extra_metrics"]["judge_failed_examples"] == 1 and ok["extra_metrics"]["judge_examples"] == 40
    assert ok["evaluation"]["chat_template"]["family"] == "llama3"
    assert ok["evaluation"]["test_set"]["n"] == 40 and len(ok["evaluation"]["test_set"]["sha256"]) == 64
    assert (
        ok["evaluation"]["installation"]["transformers"]["files_verified"] > 0
    )  # the runner asked for --verify-install
    # The judge cache sits in the campaign's harness-only area, not in the agent's workspace or HOME.
    cache = trials / ".harness" / "eval-cache" / "judge"
    assert any(cache.rglob("*.json"))
    for trial in trials.iterdir():
        if (trial / "workspace").is_dir():
            assert (
                not any((trial / "workspace").rglob("*.json")) and not (trial / "home" / ".cache" / "ptbench").exists()
            )


@pytest.mark.slow
def test_failing_phases_one_and_two_then_phase_three_succeeds(judge, tmp_path, tiny_model):
    from ptbench.inference.hf import TransformersEngine

    judge.fail_first = 14  # the fixture's 7 rubric calls, twice: phases 1 and 2 see only a failing judge
    options = {
        **HEALTHBENCH_FIXTURE,
        "max_new_tokens": 8,
        "retry_max_new_tokens": [6, 4],
        **judge_options(judge, tmp_path, judge_max_retries=0),
    }
    m = evaluate(
        "healthbench_easy",
        str(tiny_model),
        tmp_path / "eval",
        task_options=options,
        engine=TransformersEngine(str(tiny_model), batch_size=4),
        base_model="meta-llama/Meta-Llama-3-8B",
    )
    phases = m["settings"]["phases"]
    assert [(p["phase"], p["max_new_tokens"], p["ok"]) for p in phases] == [(1, 8, False), (2, 6, False), (3, 4, True)]
    assert all("every example failed" in p["error"] for p in phases[:2])
    assert m["primary"]["n"] == 3 and m["extra"]["judge_failed_examples"] == 0
    assert json.loads((tmp_path / "eval" / "metrics.json").read_text())["settings"]["phases"] == phases


class _ShrinkingEngine:
    """A seam stand-in: fails like vLLM out of memory above a token budget (no real OOM here)."""

    name = "fake"
    tokenizer = None

    def __init__(self, budget):
        self.budget = budget

    def apply_chat_template(self, messages, tools=None):
        raise AssertionError("the harness template is used, not the model's")

    def generate(self, prompts, settings, *, max_new_tokens=None):
        from ptbench.core.errors import GenerationFailed
        from ptbench.core.generation import Completion

        if max_new_tokens > self.budget:
            raise GenerationFailed(f"out of memory at max_new_tokens={max_new_tokens}")
        return [Completion(text="#### 1", finish_reason="stop", n_tokens=3) for _ in prompts]


def test_protocol_phases_and_generation_failures_are_retried(tmp_path):
    assert get_task("gsm8k").generation().max_new_tokens == 4000
    assert get_task("gsm8k").generation().retry_max_new_tokens == (3000, 2000)
    assert get_task("aime2025").generation().retry_max_new_tokens == (12000, 8000)
    assert get_task("healthbench_easy").generation().max_new_tokens == 16384
    from tests.tasks.conftest import FIXTURES

    opts = {"data_path": str(FIXTURES / "gsm8k")}
    m = evaluate(
        "gsm8k",
        "unused",
        tmp_path / "a",
        task_options=opts,
        engine=_ShrinkingEngine(2500),
        base_model="Qwen/Qwen3-1.7B-Base",
    )
    assert [(p["max_new_tokens"], p["ok"]) for p in m["settings"]["phases"]] == [
        (4000, False),
        (3000, False),
        (2000, True),
    ]
    with pytest.raises(EvaluationFailed, match="every evaluation phase failed"):
        evaluate(
            "gsm8k",
            "unused",
            tmp_path / "b",
            task_options=opts,
            engine=_ShrinkingEngine(10),
            base_model="Qwen/Qwen3-1.7B-Base",
        )
    failure = json.loads((tmp_path / "b" / "failure.json").read_text())
    assert len(failure["settings"]["phases"]) == 3 and not (tmp_path / "b" / "metrics.json").exists()
