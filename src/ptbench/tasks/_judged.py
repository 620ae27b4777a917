"""Shared by the judged tasks: judge options, the failure threshold, and what gets recorded."""

from __future__ import annotations

import typing
from typing import Any, ClassVar

from ptbench.inference.judge import JudgeClient, JudgeConfig, check_failure_rate
from ptbench.tasks._common import BenchmarkTask


class JudgedTask(BenchmarkTask):
    """Task options beyond BenchmarkTask's: judge_base_url, judge_model, judge_api_key_env,
    judge_concurrency, judge_max_retries, judge_cache_dir, judge_max_tokens, judge_temperature
    (see JudgeConfig.from_options) and judge_failure_threshold (fraction of judge calls allowed to
    fail before the evaluation fails instead of scoring; default 0.05)."""

    default_judge_model = "gpt-5-mini"
    # judge_* options are popped by prefix below, so the signature cannot declare them.
    extra_options: ClassVar[dict[str, Any]] = {f"judge_{k}": v | None for k, v in typing.get_type_hints(JudgeConfig).items()}

    def __init__(self, *, judge_failure_threshold: float = 0.05, **options: Any) -> None:
        judge_opts = {k: options.pop(k) for k in list(options) if k.startswith("judge_")}
        super().__init__(**options)
        if not 0 <= judge_failure_threshold <= 1:
            raise TypeError("judge_failure_threshold must be a fraction between 0 and 1")
        self.failure_threshold = judge_failure_threshold
        self.judge_config = JudgeConfig.from_options(judge_opts, default_model=self.default_judge_model)

    def _judge(self, conversations: list[list[dict[str, str]]]):
        client = JudgeClient(self.judge_config)
        replies = client.complete_all(conversations)
        return client, replies

    def _judge_record(self, client: JudgeClient, unparsable: int) -> dict[str, Any]:
        """Counts for the metrics; a reply the task could not parse counts as a judge failure."""
        s = client.stats
        errors = dict(s.errors, **({"unparsable": unparsable} if unparsable else {}))
        return {"judge": self.judge_config.public(), "judge_calls": s.requests, "judge_cached": s.cached,
                "judge_failures": s.failed + unparsable, "judge_retries": s.retries, "judge_errors": errors,
                "judge_failure_threshold": self.failure_threshold}

    def _check(self, record: dict[str, Any], what: str) -> None:
        check_failure_rate(record["judge_failures"], record["judge_calls"], self.failure_threshold, what, record["judge_errors"])

    def preflight(self) -> None:
        """Called by `ptbench eval` before generating: a missing judge key fails before GPU time is spent."""
        from ptbench.inference.judge import require_key

        require_key(self.judge_config)
