"""A toy environment family from outside ptbench: `toy.count` (how many times a letter occurs in a
word), written as docs/guides/add-an-environment.md says, in this one module: a generator with its
reference answer, a reward, and an adapter object that names the family and its bootcamp config.

With PTBENCH_TOY_BROKEN_ENV=1 it also offers `toy.half`, planted for the suite: its reward gives
the right answer only 0.5, so `bootcamp verify` must report it failed and `bootcamp list --verified`
must leave it out.
"""

from __future__ import annotations

import os
import random
import re
from types import ModuleType
from typing import Any

from ptbench.bootcamp.adapters import register_adapter
from ptbench.bootcamp.api import Generator, Identity, RewardCalculator, register_generator, register_reward

_WORDS = ("banana", "mississippi", "bookkeeper", "committee", "assessment", "parallel", "tomorrow")
_ANSWER = re.compile(r"(?im)^\s*answer\s*:\s*(\d+)\s*$")


@register_generator("toy_count")
class CountGenerator(Generator):
    def case(self, rng: random.Random) -> Identity:
        word = rng.choice(_WORDS)
        letter = rng.choice(sorted(set(word)))
        return {"word": word, "letter": letter, "answer": word.count(letter)}

    def prompt(self, identity: Identity) -> str:
        return f"How many times does '{identity['letter']}' occur in '{identity['word']}'? End with `Answer: <n>`."

    def reference_completion(self, identity: Identity) -> str:
        return f"Answer: {identity['answer']}"


@register_reward("toy_count")
class CountReward(RewardCalculator):
    """The last `Answer: <n>` line, the whole line a number (so a hedge or a list is no answer)."""

    def extract(self, text: str) -> str | None:
        found = _ANSWER.findall(text or "")
        return found[-1] if found else None

    def verify(self, extracted: str, identity: Identity) -> float:
        right = int(extracted) == identity["answer"]
        return (0.5 if self.params.get("half") else 1.0) if right else 0.0


class ToyAdapter:
    PREFIX = "toy."
    SOURCE = "ptbench-toy"
    EXTRA = "bootcamp"  # nothing beyond ptbench's own bootcamp extra
    DOMAIN = "toy letter counting (a third-party plugin)"

    def names(self) -> list[str]:
        return ["count", "half"] if os.environ.get("PTBENCH_TOY_BROKEN_ENV") == "1" else ["count"]

    def describe(self, name: str) -> dict[str, str]:
        return {"domain": "toy: letter counting", "tools": "-", "levels": "default"}

    def bootcamp_dict(self, name: str) -> dict[str, Any]:
        if name not in self.names():
            from ptbench.core.errors import UserError

            raise UserError(f"ptbench-toy has no environment {name!r}")
        return {
            "name": f"{self.PREFIX}{name}",
            "seed": 1,
            "levels": [{"name": "default", "generator": "toy_count"}],
            "splits": {"test": 10, "train": 50},
            "reward": {"name": "toy_count", "params": {"half": name == "half"}},
            "limits": {"max_assistant_turns": 1, "max_tool_calls": 0},
        }

    def library(self) -> ModuleType:
        import ptbench_toy

        return ptbench_toy


register_adapter(ToyAdapter())
