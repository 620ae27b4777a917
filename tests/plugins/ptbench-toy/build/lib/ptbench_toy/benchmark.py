"""`toy_parity`: a benchmark as a site writes one, in its own package (docs/guides/add-a-benchmark.md).

Is the number of ones in an 8-bit string even or odd? The 256 strings are split by a fixed seed into
a test split, a reserve (the memorization check's siblings: the test's distribution, in no file the
agent gets) and the training split (the rest). The scorer reads the answer's first word. Every fact
ptbench needs about the benchmark is an attribute of the class below; no ptbench file names it.
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.core.generation import GenerationSettings
from ptbench.tasks.base import Example, TaskFacts, register_task

BITS = 8


def _split(n_test: int) -> tuple[list[str], list[str], list[str]]:
    """(train, test, reserve), fixed by the task: every trial is scored on the same items."""
    strings = [format(i, f"0{BITS}b") for i in range(2**BITS)]
    random.Random(1234).shuffle(strings)
    return strings[2 * n_test :], strings[:n_test], strings[n_test : 2 * n_test]


def answer(bits: str) -> str:
    return "odd" if bits.count("1") % 2 else "even"


@register_task("toy_parity")
class ToyParity(TaskFacts):
    version = "1"
    primary_metric = "parity_accuracy"
    token_phases = (4, 2)
    agent_brief = (
        "toy_parity: say whether an 8-bit string holds an even or odd number of ones (`10110010 parity:` -> "
        "`even`). Training examples are in `data/train.jsonl`; they do not overlap with the test strings."
    )
    sibling_source = "ptbench_toy.benchmark:siblings"

    def __init__(self, n_test: int = 24) -> None:
        if not 1 <= n_test <= 2**BITS // 3:
            raise TypeError(f"n_test must be between 1 and {2**BITS // 3}")
        self.n_test = n_test

    @classmethod
    def configured_test_size(cls, options: dict[str, Any]) -> int:
        return int(options.get("n_test", 24))

    @staticmethod
    def prompt_of(bits: str) -> str:
        return f"{bits} parity:"

    def _example(self, bits: str) -> Example:
        return Example(id=bits, prompt=self.prompt_of(bits), reference=answer(bits))

    def train_examples(self, seed: int) -> list[dict[str, str]]:
        train = _split(self.n_test)[0]
        random.Random(seed).shuffle(train)
        return [{"prompt": self.prompt_of(b), "completion": f" {answer(b)}\n"} for b in train]

    def test_examples(self, limit: int | None = None) -> list[Example]:
        test = _split(self.n_test)[1]
        return [self._example(b) for b in (test[:limit] if limit else test)]

    def reserve_examples(self) -> list[Example]:
        return [self._example(b) for b in _split(self.n_test)[2]]

    def generation(self) -> GenerationSettings:
        return GenerationSettings(max_new_tokens=self.token_phases[0], stop=("\n",))

    def score(self, example: Example, completion: str) -> float:
        words = completion.strip().lower().split()
        return float(bool(words) and words[0].strip(".,") == example.reference)


def siblings(task: ToyParity, seed: int, rng: random.Random) -> Any:
    """The memorization check's sibling source (named by `sibling_source`; imported in the check's
    process only): the reserve's strings against the test split's."""
    from ptbench.integrity.memorization.siblings import Item, SiblingSets

    def item(e: Example) -> Item:
        return Item(str(e.id), str(e.prompt), f" {e.reference}")

    test, reserve = [item(e) for e in task.test_examples()], [item(e) for e in task.reserve_examples()]
    return SiblingSets(
        test=test,
        siblings=rng.sample(reserve, len(reserve)),
        test_name="toy_parity test strings",
        siblings_name="toy_parity reserve strings",
        source="fixed reserve of the task's generator, in neither split",
    )
