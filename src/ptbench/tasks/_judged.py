"""Shared by the judged tasks: judge options, the failure threshold, and what gets recorded.

Failures are counted per *example*: an example with any failed judge call (HTTP error, no answer,
a reply without a parsable verdict) is a failed example and is not scored. The threshold applies to
the fraction of failed examples, so a judge that fails one rubric call in every HealthBench
conversation fails the evaluation instead of quietly dropping most of the test set.

Several judges (`judge_models: [m1, m2, m3]`, each with the same endpoint settings): every example
is judged by every judge; an example's score is the mean of the judges' scores (failed if any judge
failed on it), and their agreement over the categorical verdicts (percent agreement, Cohen's kappa
for two judges, Fleiss' kappa for more; ptbench.results.agreement) goes into the metrics.
"""

from __future__ import annotations

import typing
from typing import Any, ClassVar

from ptbench.core.errors import EvaluationFailed
from ptbench.inference.judge import JudgeClient, JudgeConfig, JudgeReply, require_key
from ptbench.results.agreement import agreement
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


def mean_of_judges(scores: tuple[float | None, ...]) -> float | None:
    """An example's score over several judges: their mean, or None when any judge could not score it."""
    if any(s is None for s in scores):
        return None
    return sum(s for s in scores if s is not None) / len(scores)


class JudgedTask(BenchmarkTask):
    """Task options beyond BenchmarkTask's: judge_base_url, judge_model, judge_api_key_env,
    judge_concurrency, judge_max_retries, judge_cache_dir, judge_max_tokens, judge_temperature,
    judge_reasoning_effort (see JudgeConfig.from_options), judge_models (several judges, each with
    the same endpoint settings, instead of judge_model) and judge_failure_threshold (fraction of
    examples allowed to have a failed judge call before the evaluation fails; default 0.05)."""

    default_judge_model = "gpt-5-mini"
    default_judge_reasoning_effort: str | None = None
    # judge_* options are popped by prefix below, so the signature cannot declare them.
    extra_options: ClassVar[dict[str, Any]] = {
        f"judge_{k}": v | None for k, v in typing.get_type_hints(JudgeConfig).items()
    } | {"judge_models": list[str] | None}

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
        models = judge_opts.pop("judge_models", None)
        if models is not None:
            if judge_opts.get("judge_model"):
                raise TypeError("give judge_model (one judge) or judge_models (several), not both")
            if not isinstance(models, list) or not models or not all(isinstance(m, str) and m for m in models):
                raise TypeError("judge_models must be a non-empty list of model names, e.g. [gpt-5-mini, o4-mini]")
            if len(set(models)) != len(models):
                raise TypeError(f"judge_models names a judge twice: {models}")
        self.judge_configs = [
            JudgeConfig.from_options({**judge_opts, "judge_model": m}, default_model=self.default_judge_model)
            for m in (models or [judge_opts.get("judge_model")])
        ]
        self.judge_config = self.judge_configs[0]

    def _judge(self, conversations: list[list[dict[str, str]]]) -> list[tuple[JudgeClient, list[JudgeReply]]]:
        """Every conversation through every judge: (client, replies in input order) per judge."""
        out = []
        for config in self.judge_configs:
            client = JudgeClient(config)
            out.append((client, client.complete_all(conversations)))
        return out

    def _combine_judges(
        self,
        judged: list[tuple[JudgeClient, list[JudgeReply]]],
        per_judge: list[list[float | None]],
        by_judge: list[list[Any]],
        key: str,
        *,
        unparsable: int,
    ) -> tuple[list[float | None], list[dict[str, Any]], dict[str, Any]]:
        """(each example's score: the mean over judges; its details: `key` from the first judge's
        `by_judge` entry, and with several judges `<key>_by_judge` and `score_by_judge`; the judge record)."""
        scores = [mean_of_judges(column) for column in zip(*per_judge, strict=True)]
        details: list[dict[str, Any]] = [{key: v} for v in by_judge[0]]
        if len(judged) > 1:
            for i, d in enumerate(details):
                d[f"{key}_by_judge"] = {c.model: v[i] for c, v in zip(self.judge_configs, by_judge, strict=True)}
                d["score_by_judge"] = {c.model: s[i] for c, s in zip(self.judge_configs, per_judge, strict=True)}
        record = self._judge_record(
            [c for c, _ in judged],
            unparsable=unparsable,
            failed_examples=sum(s is None for s in scores),
            examples=len(scores),
        )
        return scores, details, record

    def _judge_record(
        self, clients: list[JudgeClient], *, unparsable: int, failed_examples: int, examples: int
    ) -> dict[str, Any]:
        """Counts for the metrics (summed over judges); a reply the task could not parse counts as a failed call."""
        errors: dict[str, int] = {}
        for c in clients:
            for kind, n in c.stats.errors.items():
                errors[kind] = errors.get(kind, 0) + n
        if unparsable:
            errors["unparsable"] = unparsable
        record = {
            "judge": self.judge_config.public(),
            "judge_calls": sum(c.stats.requests for c in clients),
            "judge_cached": sum(c.stats.cached for c in clients),
            "judge_failed_calls": sum(c.stats.failed for c in clients) + unparsable,
            "judge_examples": examples,
            "judge_failed_examples": failed_examples,
            "judge_retries": sum(c.stats.retries for c in clients),
            "judge_errors": errors,
            "judge_failure_threshold": self.failure_threshold,
        }
        if len(self.judge_configs) > 1:
            record["judges"] = [c.model for c in self.judge_configs]
        return record

    def _agreement(self, record: dict[str, Any], verdicts: list[list[Any]]) -> None:
        """With several judges: their agreement over the items every judge gave a verdict on."""
        if len(self.judge_configs) > 1:
            record["judge_agreement"] = agreement([v for v in verdicts if None not in v], len(self.judge_configs))

    @staticmethod
    def _judge_extra(record: dict[str, Any]) -> dict[str, Any]:
        extra = {k: record[k] for k in ("judge_calls", "judge_failed_calls", "judge_examples", "judge_failed_examples")}
        if "judge_agreement" in record:
            a = record["judge_agreement"]
            extra.update(
                judge_count=a["judges"],
                judge_agreement=a["percent_agreement"],
                judge_kappa=a["kappa"],
                judge_kappa_kind=a["kappa_kind"],
                judge_agreement_items=a["items"],
            )
        return extra

    def _check(self, record: dict[str, Any], what: str) -> None:
        check_judge_failures(record, what)

    def preflight(self) -> None:
        """Called by `ptbench eval` before generating: a missing judge key fails before GPU time is spent."""
        for config in self.judge_configs:
            require_key(config)
