"""GPQA main (448 questions): multiple choice with chain of thought, choices shuffled.

Shuffling is part of the benchmark's definition here, so it is seeded (task option `seed`) and
balanced: over the whole set the correct answer sits at A, B, C and D equally often (counts differ
by at most one), and the same seed always gives the same order for each question.
"""

from __future__ import annotations

import hashlib
import random
import re

from ptbench.tasks._common import BenchmarkTask, DatasetPin, load_rows
from ptbench.tasks.base import Example, register_task

# Gated on the Hub (accept the terms, then HF_TOKEN). No verified commit hash was at hand: set one.
PIN = DatasetPin(id="Idavidrein/gpqa", config="gpqa_main", split="train", revision=None)
LETTERS = "ABCD"

INSTRUCTION = (
    "Answer the following multiple choice question. The last line of your response should be of the following "
    "format: 'Answer: $LETTER' (without quotes) where LETTER is one of ABCD. Think step by step before answering.\n\n"
    "{question}\n\nA) {A}\nB) {B}\nC) {C}\nD) {D}"
)
_ANSWER = re.compile(r"(?i)answer\s*(?:is)?\s*[:：]?\s*\**\s*\(?([ABCD])\)?\b")


def shuffled_choices(rows: list[dict], seed: int) -> list[tuple[list[str], int]]:
    """Per row: the four choices in presentation order and the index of the correct one."""
    positions = [i % 4 for i in range(len(rows))]
    random.Random(f"gpqa-positions-{seed}").shuffle(positions)
    out = []
    for row, pos in zip(rows, positions, strict=True):
        wrong = [row["Incorrect Answer 1"], row["Incorrect Answer 2"], row["Incorrect Answer 3"]]
        key = hashlib.sha256(f"{seed}:{row.get('Record ID', row['Question'])}".encode()).hexdigest()
        random.Random(key).shuffle(wrong)
        choices = wrong[:pos] + [row["Correct Answer"]] + wrong[pos:]
        out.append(([str(c).strip() for c in choices], pos))
    return out


def extract_letter(completion: str) -> str | None:
    hits = _ANSWER.findall(completion)
    return hits[-1].upper() if hits else None


@register_task("gpqa")
class GPQA(BenchmarkTask):
    primary_metric = "accuracy"
    token_phases = (16000, 12000, 8000)
    default_baseline = True
    eval_resources = (PIN.held_out(),)
    sibling_source = "ptbench.integrity.memorization.gpqa_siblings:siblings"
    agent_brief = (
        "GPQA (main set): graduate-level multiple-choice science questions (biology, physics, chemistry); "
        "the model reasons and then names one of four shuffled choices. The GPQA questions are the test "
        "data: use other science and reasoning data."
    )
    base_stop = ("\nQuestion:",)

    def test_examples(self, limit: int | None = None) -> list[Example]:
        rows, self.dataset = load_rows("gpqa", PIN, self.data_path)
        examples = []
        for i, (row, (choices, pos)) in enumerate(zip(rows, shuffled_choices(rows, self.seed), strict=True)):
            values = {"question": row["Question"].strip(), **dict(zip(LETTERS, choices, strict=True))}
            examples.append(
                Example(
                    id=str(row.get("Record ID", i)),
                    reference=LETTERS[pos],
                    prompt=self._prompt(INSTRUCTION.format(**values), "gpqa_base.jinja", **values),
                    meta={"choices": choices},
                )
            )
        return examples[:limit] if limit else examples

    def score(self, example: Example, completion: str) -> float:
        return float(extract_letter(completion) == example.reference)

    def settings_info(self) -> dict:
        return {**super().settings_info(), "shuffle_seed": self.seed}
