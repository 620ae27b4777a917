"""HealthBench Easy (245 conversations): a judge grades every rubric criterion of the response.

An example's score is (points of the criteria met) / (sum of the positive points), clipped to
[0, 1]; criteria with negative points are undesirable behaviours that subtract when met. The
primary metric is the mean over examples with a bootstrap standard error (1000 resamples, seeded),
as in OpenAI's simple-evals. An example with a criterion the judge failed to grade is a failed
example: it is not scored, and when more than the threshold of examples (default 5%) failed, or all
of them, the evaluation fails instead of scoring the rest.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from typing import Any

from ptbench.tasks._common import DatasetPin, load_rows, render_template
from ptbench.tasks._judged import JudgedTask
from ptbench.tasks.base import Example, MetricValue, ScoredBatch, register_task
from ptbench.tasks.subsets import read_ids, select_by_id

# HealthBench's published file (simple-evals). The Easy subset's 245 prompt ids ship with ptbench
# (tasks/data/healthbench_easy_prompt_ids.txt); its examples are taken from this file by id, and a
# missing id is an error. A URL has no revision: the test-set hash in the metrics identifies it.
PIN = DatasetPin(
    id="json",
    split="train",
    revision=None,
    data_files="https://openaipublic.blob.core.windows.net/simple-evals/healthbench/2025-05-07-06-14-12_oss_eval.jsonl",
)
_JSON = re.compile(r"\{.*\}", re.S)


def example_score(rubrics: list[dict[str, Any]], met: Sequence[bool | None]) -> float:
    """Points met over positive points, clipped to [0, 1] (callers pass only complete grades)."""
    possible = sum(r["points"] for r in rubrics if r["points"] > 0)
    if possible <= 0:
        return 0.0
    achieved = sum(r["points"] for r, m in zip(rubrics, met, strict=True) if m)
    return min(1.0, max(0.0, achieved / possible))


def bootstrap_stderr(values: list[float], *, samples: int = 1000, seed: int = 0) -> float | None:
    """Standard deviation of the mean over bootstrap resamples."""
    if len(values) < 2:
        return None
    rng = random.Random(seed)
    n = len(values)
    means = [sum(rng.choices(values, k=n)) / n for _ in range(samples)]
    mu = sum(means) / samples
    return (sum((m - mu) ** 2 for m in means) / (samples - 1)) ** 0.5


def parse_grade(text: str) -> bool | None:
    """The judge's criteria_met (JSON reply), or None if the reply holds no such verdict."""
    match = _JSON.search(text)
    if not match:
        return None
    try:
        value = json.loads(match.group(0)).get("criteria_met")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, bool) else None


@register_task("healthbench_easy")
class HealthBenchEasy(JudgedTask):
    primary_metric = "score"
    token_phases = (16384, 12288, 8192)
    default_baseline = True
    no_sibling_reason = (
        "open-ended conversations graded by rubric: no single reference answer whose "
        "likelihood measures memorization, so no sibling comparison is defined"
    )
    agent_brief = (
        "HealthBench (easy subset): health conversations graded by a judge against physician-written "
        "rubrics (accuracy, completeness, safety, communication). The HealthBench conversations are the "
        "test data: use other medical and instruction data."
    )

    def __init__(
        self, *, subset_ids: list[str] | str | None = None, bootstrap_samples: int = 1000, **options: Any
    ) -> None:
        super().__init__(**options)
        self.subset_ids = subset_ids  # None: the shipped 245 prompt ids of HealthBench Easy
        self.bootstrap_samples = bootstrap_samples

    def test_examples(self, limit: int | None = None) -> list[Example]:
        ids, subset = read_ids(self.subset_ids, "healthbench_easy_prompt_ids.txt")
        rows, self.dataset = load_rows("healthbench_easy", PIN, self.data_path)
        rows = select_by_id(
            rows, "prompt_id", ids, "healthbench_easy", str(self.dataset.get("local_path") or PIN.data_files)
        )
        self.dataset.update(subset)
        rows = rows[:limit] if limit else rows
        out = []
        for r in rows:
            prompt = (
                r["prompt"]
                if self.prompt_format == "chat"
                else render_template("healthbench_base.jinja", conversation=r["prompt"])
            )
            out.append(
                Example(id=r["prompt_id"], prompt=prompt, reference=r["rubrics"], meta={"conversation": r["prompt"]})
            )
        return out

    def score(self, example: Example, completion: str) -> float:
        """One example through the judge (evaluation scores whole batches with `score_batch`); 0.0 if unjudgeable."""
        score = self.score_batch([example], [completion]).scores[0]
        return 0.0 if score is None else score

    def grader_messages(
        self, conversation: list[dict[str, str]], response: str, rubric: dict[str, Any]
    ) -> list[dict[str, str]]:
        transcript = "\n\n".join(
            f"{m['role']}: {m['content']}" for m in [*conversation, {"role": "assistant", "content": response}]
        )
        text = render_template(
            "healthbench_grader.jinja",
            conversation=transcript,
            rubric_item=f"[{rubric['points']}] {rubric['criterion']}",
        )
        return [{"role": "user", "content": text}]

    def score_batch(self, examples: list[Example], completions: list[str]) -> ScoredBatch:
        index, conversations = [], []
        for i, (ex, response) in enumerate(zip(examples, completions, strict=True)):
            for rubric in ex.reference:
                index.append(i)
                conversations.append(self.grader_messages(ex.meta["conversation"], response, rubric))
        judged = self._judge(conversations)
        per_judge: list[list[float | None]] = []
        grades_by_judge: list[list[list[bool | None]]] = []
        unparsable = 0
        for _, replies in judged:
            grades: list[list[bool | None]] = [[] for _ in examples]
            for i, reply in zip(index, replies, strict=True):
                grade = parse_grade(reply.text) if reply.ok and reply.text is not None else None
                unparsable += reply.ok and grade is None
                grades[i].append(grade)
            per_judge.append(
                [
                    example_score(ex.reference, g) if all(x is not None for x in g) else None
                    for ex, g in zip(examples, grades, strict=True)
                ]
            )
            grades_by_judge.append(grades)
        scores, details, record = self._combine_judges(
            judged, per_judge, grades_by_judge, "criteria_met", unparsable=unparsable
        )
        # one judged item per rubric criterion: met / unmet per judge
        self._agreement(
            record,
            [
                [g[i][k] for g in grades_by_judge]
                for i in range(len(examples))
                for k in range(len(grades_by_judge[0][i]))
            ],
        )
        self._check(record, "healthbench_easy")
        valid = [s for s in scores if s is not None]
        mean = sum(valid) / len(valid)  # not empty: _check refuses when every example failed
        primary = MetricValue(
            name=self.primary_metric,
            value=mean,
            n=len(valid),
            stderr=bootstrap_stderr(valid, samples=self.bootstrap_samples, seed=self.seed),
        )
        return ScoredBatch(
            scores=scores,
            details=details,
            settings=record,
            primary=primary,
            extra={**self._judge_extra(record), "stderr_method": f"bootstrap ({self.bootstrap_samples} resamples)"},
        )
