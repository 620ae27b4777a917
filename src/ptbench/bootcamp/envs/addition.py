"""The demo task's format as a bootcamp environment: `a+b=` completions, never a test item.

Cases are drawn from the train side of the arithmetic task's own split (`ptbench.demo.addition`),
so a model trained on this environment's reward (the `reference-grpo` agent's default) has seen the
task's format and never its test items. The reward is exact match of the completion's first line.
"""

from __future__ import annotations

import random
import re

from ptbench.bootcamp.api import Generator, Identity, RewardCalculator, register_generator, register_reward
from ptbench.demo.addition import prompt_of, split_pairs

_FIRST_NUMBER = re.compile(r"^\s*(-?\d+)\s*$")


@register_generator("addition")
class AdditionGenerator(Generator):
    """Params: digits (2), n_test (200: the task's test split size, which these cases avoid)."""

    def case(self, rng: random.Random) -> Identity:
        train, _ = split_pairs(int(self.params.get("digits", 2)), int(self.params.get("n_test", 200)))
        a, b = rng.choice(train)
        return {"a": a, "b": b, "answer": a + b}

    def prompt(self, identity: Identity) -> str:
        return prompt_of(identity["a"], identity["b"])

    def dedup_key(self, identity: Identity) -> str:
        return f"{identity['a']}+{identity['b']}"

    def reference_completion(self, identity: Identity) -> str:
        return f"{identity['answer']}"


@register_reward("addition")
class AdditionReward(RewardCalculator):
    """1 when the completion's first line is exactly the sum (as the task scores), else 0."""

    def extract(self, text: str) -> str | None:
        first = (text or "").split("\n", 1)[0]
        match = _FIRST_NUMBER.match(first)
        return match.group(1) if match else None

    def verify(self, extracted: str, identity: Identity) -> float:
        return float(int(extracted) == identity["answer"])
