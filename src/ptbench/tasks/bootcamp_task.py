"""A bootcamp environment's split as a benchmark task: `task: {name: bootcamp, options: {config: rg.leg_counting}}`.

The harness generates the split itself from the config (a YAML path or an adapted environment's
name, e.g. `rg.leg_counting`; byte-identical for a config and seed), prompts the model with each row's
chat messages through the evaluation engine, and scores the final text with the environment's own
reward, so one environment can both train a model (its train split, or GRPO on its reward) and
evaluate it. The training split is offered as prompt/completion pairs (the generators' reference
answers) for SFT agents.

Single-turn environments only: one with tools or an interaction (a game, a multi-turn puzzle) needs
the rollout loop to play the model, which the evaluation engine does not run yet, and is refused at
validation with that reason.
"""

from __future__ import annotations

import json
import random
from functools import cached_property
from typing import Any

from ptbench.bootcamp.config import BootcampConfig, load_bootcamp
from ptbench.bootcamp.datagen import build_rows
from ptbench.bootcamp.environment import Environment, build_environment
from ptbench.bootcamp.rows import sft_row
from ptbench.core.errors import UserError
from ptbench.core.generation import GenerationSettings
from ptbench.tasks.base import Example, register_task


@register_task("bootcamp")
class BootcampTask:
    version = "1"
    primary_metric = "mean_reward"

    def __init__(
        self, config: str | None = None, split: str = "test", train_split: str = "train", max_new_tokens: int = 0
    ) -> None:
        if not config:
            raise TypeError("name the bootcamp: options {config: <bootcamp YAML or an environment such as rg.gcd>}")
        try:
            self.config: BootcampConfig = load_bootcamp(config)
        except UserError as exc:
            raise TypeError(str(exc)) from None
        for name in (split, train_split):
            if name not in self.config.splits:
                raise TypeError(
                    f"bootcamp '{self.config.name}' has no split '{name}' (it has {', '.join(self.config.splits)})"
                )
        if self.config.tools or self.config.interaction:
            raise TypeError(
                f"bootcamp '{self.config.name}' plays several turns (tools or an interaction); as a task only "
                "single-turn environments are scored so far (the rollout loop does not drive the evaluation engine)"
            )
        self.split, self.train_split = split, train_split
        self.max_new_tokens = max_new_tokens or self.config.sampling.max_tokens  # 0: the config's sampling

    @cached_property
    def env(self) -> Environment:
        return build_environment(self.config)

    @cached_property
    def _rows(self) -> dict[str, list[dict[str, Any]]]:
        return build_rows(self.env)

    @property
    def dataset(self) -> dict[str, Any]:
        """What identifies the scored items (recorded with the result)."""
        return {"bootcamp": self.config.name, "data_hash": self.config.data_hash(), "split": self.split}

    def train_examples(self, seed: int) -> list[dict[str, str]] | None:
        pairs = []
        for row in self._rows[self.train_split]:
            example = sft_row(self.env, row, fmt="text")
            if example is not None:
                pairs.append({"prompt": example["prompt"] + "\n\n", "completion": example["completion"] + "\n"})
        random.Random(seed).shuffle(pairs)
        return pairs

    def test_examples(self, limit: int | None = None) -> list[Example]:
        rows = self._rows[self.split]
        rows = rows[:limit] if limit else rows
        return [
            Example(
                id=row["extra_info"]["sample_id"],
                prompt=[{"role": m["role"], "content": m["content"]} for m in row["prompt"]],
                reference=row["reward_model"]["ground_truth"],
                meta={"level": row["extra_info"]["level"]},
            )
            for row in rows
        ]

    def generation(self) -> GenerationSettings:
        return GenerationSettings(max_new_tokens=self.max_new_tokens)

    def score(self, example: Example, completion: str) -> float:
        return float(self.env.reward.score(completion, json.loads(example.reference)).score)
