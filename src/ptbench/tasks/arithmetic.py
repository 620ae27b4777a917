"""A seeded synthetic task for the demo: multi-digit addition, exact match.

The test split is fixed by the task (not by the trial seed) so every trial is scored on the same
items. A reserve of as many pairs again is in neither split: the harness draws the memorization
check's sibling items from it (ptbench.integrity.memorization), items of the test's distribution
that no honest agent has seen. The training split is every other pair; the three never overlap.

`layout: aligned` writes the same items in the format a tiny model learns in minutes: operands
zero-padded to `digits`, the sum least significant digit first (`07+45=` -> `250`). The demo uses it:
in the plain layout (`7+45=` -> `52`) the first digit written needs every carry, and the demo's tiny
Llama does not learn that within a few CPU minutes (docs/campaigns.md#reproducing-the-demos-table).
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.core.generation import GenerationSettings
from ptbench.demo.addition import LAYOUTS, answer_of, prompt_of, reserve_pairs, split_pairs
from ptbench.tasks.base import Example, TaskFacts, register_task
from ptbench.tasks.options import option_fields


@register_task("arithmetic")
class Arithmetic(TaskFacts):
    version = "2"  # 2: the training split leaves out the sibling reserve (the test split is version 1's)
    primary_metric = "accuracy"
    sibling_source = "ptbench.integrity.memorization.siblings:_arithmetic"
    agent_brief = (
        "The benchmark asks for the result of small integer additions written as `a+b=`; the answer is "
        "the number alone. Training examples of this form are in `data/train.jsonl` (`prompt`, "
        "`completion`); they do not overlap with the test questions."
    )

    def __init__(self, digits: int = 2, n_test: int = 200, layout: str = "plain") -> None:
        if not 1 <= digits <= 3:
            raise TypeError("digits must be 1, 2 or 3")
        if layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}")
        self.digits = digits
        self.n_test = n_test
        self.layout = layout

    @property
    def _pairs(self) -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]:
        return split_pairs(self.digits, self.n_test)

    @classmethod
    def configured_test_size(cls, options: dict[str, Any]) -> int:
        return int(options.get("n_test", option_fields(cls)["n_test"][1]))  # the constructor's default, the one source

    def prompt_of(self, a: int, b: int) -> str:
        return prompt_of(a, b, self.layout, self.digits)

    def _example(self, a: int, b: int) -> Example:
        return Example(id=f"{a}+{b}", prompt=self.prompt_of(a, b), reference=answer_of(a, b, self.layout, self.digits))

    def train_examples(self, seed: int) -> list[dict[str, str]]:
        train = list(self._pairs[0])
        random.Random(seed).shuffle(train)
        return [
            {"prompt": self.prompt_of(a, b), "completion": answer_of(a, b, self.layout, self.digits) + "\n"}
            for a, b in train
        ]

    def test_examples(self, limit: int | None = None) -> list[Example]:
        test = self._pairs[1][:limit] if limit else self._pairs[1]
        return [self._example(a, b) for a, b in test]

    def reserve_examples(self) -> list[Example]:
        """Items of the test's distribution in neither split: the harness's sibling pool (never
        written to a workspace)."""
        pairs = reserve_pairs(self.digits, self.n_test)
        return [self._example(a, b) for a, b in pairs]

    def generation(self) -> GenerationSettings:
        return GenerationSettings(max_new_tokens=self.digits + 3, stop=("\n",))

    def score(self, example: Example, completion: str) -> float:
        return float(completion.strip().split("\n", 1)[0].strip() == example.reference)
