"""Shared by the judged tasks: judge options, the failure threshold, and what gets recorded.

Failures are counted per *example*: an example with any failed judge call (HTTP error, no answer,
a reply without a parsable verdict) is a failed example and is not scored. The threshold applies to
the fraction of failed examples, so a judge that fails one rubric call in every HealthBench
conversation fails the evaluation instead of quietly dropping most of the test set.
"""

from __future__ import annotations

import typing
from typing import Any, ClassVar

from ptbench.core.errors import EvaluationFailed
from ptbench.inference.judge import JudgeClient, JudgeConfig, require_key
from ptbench.tasks._common import BenchmarkTask


def check_judge_failures(record: dict[str, Any], what: str) -> None:
    """Raise EvaluationFailed when more than the threshold of examples failed, or all of them did."""
    failed, total = record["judge_failed_examples"], record["judge_examples"]
    threshold = record["judge_failure_threshold"]
    rate = failed / total if total else 1.0
    if total and failed < total and rate <= threshold:
        return
    why = (
        "no example to judge"
        if not total
        else ("every example failed" if failed == total else f"{rate:.1%} > threshold {threshold:.1%}")
    )
    raise EvaluationFailed(
        f"{what}: {failed} of {total} examples had a failed judge call ({why}; {record['judge_failed_calls']} of "
        f"{record['judge_calls']} calls failed, errors {record['judge_errors']}). Not scored. "
        "Fix the judge endpoint/key and re-run (answered calls are cached).",
        {
            k: record[k]
            for k in ("judge_calls", "judge_failed_calls", "judge_examples", "judge_failed_examples", "judge_errors")
        },
    )


class JudgedTask(BenchmarkTask):
    """Task options beyond BenchmarkTask's: judge_base_url, judge_model, judge_api_key_env,
    judge_concurrency, judge_max_retries, judge_cache_dir, judge_max_tokens, judge_temperature,
    judge_reasoning_effort (see JudgeConfig.from_options) and judge_failure_threshold (fraction of
    examples allowed to have a failed judge call before the evaluation fails; default 0.05)."""

    default_judge_model = "gpt-5-mini"
    default_judge_reasoning_effort: str | None = None
    # judge_* options are popped by prefix below, so the signature cannot declare them.
    extra_options: ClassVar[dict[str, Any]] = {
        f"judge_{k}": v | None for k, v in typing.get_type_hints(JudgeConfig).items()
    }

    def __init__(self, *, judge_failure_threshold: float = 0.05, **options: Any) -> None:
        judge_opts = {k: options.pop(k) for k in list(options) if k.startswith("judge_")}
        if self.default_judge_reasoning_effort and "judge_reasoning_effort" not in judge_opts:
            judge_opts["judge_reasoning_effort"] = (
                self.default_judge_reasoning_effort
            )  # null in the options turns it off
        super().__init__(**options)
        if not 0 <= judge_failure_threshold <= 1:
            raise TypeError("judge_failure_threshold must be a fraction between 0 and 1")
        self.failure_threshold = judge_failure_threshold
        self.judge_config = JudgeConfig.from_options(judge_opts, default_model=self.default_judge_model)

    def _judge(self, conversations: list[list[dict[str, str]]]):
        client = JudgeClient(self.judge_config)
        replies = client.complete_all(conversations)
        return client, replies

    def _judge_record(
        self, client: JudgeClient, *, unparsable: int, failed_examples: int, examples: int
    ) -> dict[str, Any]:
        """Counts for the metrics; a reply the task could not parse counts as a failed call."""
        s = client.stats
        errors = dict(s.errors, **({"unparsable": unparsable} if unparsable else {}))
        return {
            "judge": self.judge_config.public(),
            "judge_calls": s.requests,
            "judge_cached": s.cached,
            "judge_failed_calls": s.failed + unparsable,
            "judge_examples": examples,
            "judge_failed_examples": failed_examples,
            "judge_retries": s.retries,
            "judge_errors": errors,
            "judge_failure_threshold": self.failure_threshold,
        }

    @staticmethod
    def _judge_extra(record: dict[str, Any]) -> dict[str, Any]:
        return {k: record[k] for k in ("judge_calls", "judge_failed_calls", "judge_examples", "judge_failed_examples")}

    def _check(self, record: dict[str, Any], what: str) -> None:
        check_judge_failures(record, what)

    def preflight(self) -> None:
        """Called by `ptbench eval` before generating: a missing judge key fails before GPU time is spent."""
        require_key(self.judge_config)
