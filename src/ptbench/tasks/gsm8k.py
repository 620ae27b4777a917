"""GSM8K (test split, 1319 problems): the final number must equal the reference `#### N`.

Extraction order on a model's answer: the `#### N` convention the dataset itself uses, then an
`Answer: N` / `final answer is N` line, then a `\\boxed{N}`, then the last number in the text.
Numbers are compared as exact decimals after removing thousands separators, currency signs and
units, so "$1,234.00" equals "1234".
"""

from __future__ import annotations

import json
import re
from decimal import Decimal, InvalidOperation

from ptbench.tasks._common import TEMPLATES, BenchmarkTask, DatasetPin, load_rows
from ptbench.tasks.base import Example, register_task

PIN = DatasetPin(id="openai/gsm8k", config="main", split="test", revision="cc7b047b6e5bb11b4f1af84efc572db110a51b3c")

INSTRUCTION = (
    "Solve the following math problem step by step. The last line of your response should be of the form "
    '"#### ANSWER" (without quotes) where ANSWER is the final number.\n\n{question}'
)

_NUMBER = r"-?\$?\s*\d[\d,]*(?:\.\d+)?|-?\$?\s*\.\d+"
_MARKERS = [
    re.compile(r"####\s*(" + _NUMBER + ")"),
    re.compile(r"(?i)(?:final answer|answer)\s*(?:is|:)?\s*[:=]?\s*\**\s*(" + _NUMBER + ")"),
    re.compile(r"\\boxed\{\s*(" + _NUMBER + r")\s*\}"),
]
_ANY_NUMBER = re.compile(_NUMBER)


def normalize_number(text: str) -> Decimal | None:
    """'$1,234.50' -> Decimal('1234.50'); None when the text holds no number."""
    cleaned = text.replace(",", "").replace("$", "").replace(" ", "").rstrip(".")
    try:
        return Decimal(cleaned)
    except InvalidOperation:
        return None


def reference_answer(answer_field: str) -> str:
    """The number after '####' in a GSM8K answer string, without separators."""
    value = answer_field.split("####")[-1].strip()
    number = normalize_number(value)
    if number is None:
        raise ValueError(f"GSM8K answer without a '#### N' number: {answer_field[-80:]!r}")
    return _canonical(number)


def extract_answer(completion: str) -> str | None:
    """The model's final number (see the module docstring for the order of preference)."""
    for pattern in _MARKERS:
        hits = pattern.findall(completion)
        if hits:
            number = normalize_number(hits[-1])
            if number is not None:
                return _canonical(number)
    numbers = [n for n in (normalize_number(m) for m in _ANY_NUMBER.findall(completion)) if n is not None]
    return _canonical(numbers[-1]) if numbers else None


def _canonical(number: Decimal) -> str:
    # 18 == 18.0 == 18.00; keep non-integers exact.
    if number == number.to_integral_value():
        return str(int(number))
    return format(number.normalize(), "f")


@register_task("gsm8k")
class GSM8K(BenchmarkTask):
    primary_metric = "accuracy"
    token_phases = (4000, 3000, 2000)
    max_fewshot = 8  # templates/gsm8k_fewshot.txt
    default_baseline = True
    eval_resources = (PIN.held_out(("*/test-*", "test-*")),)  # the repository's train split is the agents'
    sibling_source = "ptbench.integrity.memorization.gsm8k_siblings:siblings"
    agent_brief = (
        "GSM8K: grade-school math word problems. The score is the share of problems whose final number "
        "equals the reference answer; the model answers with a step-by-step solution ending in the final "
        "number. The GSM8K test split is the test data: use its train split or other math data instead."
    )
    base_stop = ("\nQuestion:", "\n\nQuestion")

    def __init__(self, **options) -> None:
        super().__init__(**options)
        if self.fewshot > self.max_fewshot:
            raise TypeError(f"fewshot: at most {self.max_fewshot} worked examples ship with the task")

    def test_examples(self, limit: int | None = None) -> list[Example]:
        rows, self.dataset = load_rows("gsm8k", PIN, self.data_path)
        rows = rows[:limit] if limit else rows
        shots = json.loads((TEMPLATES / "gsm8k_fewshot.txt").read_text())[: self.fewshot]
        return [
            Example(
                id=f"gsm8k-{i}",
                reference=reference_answer(r["answer"]),
                prompt=self._prompt(
                    INSTRUCTION.format(question=r["question"]), "gsm8k_base.jinja", question=r["question"], shots=shots
                ),
            )
            for i, r in enumerate(rows)
        ]

    def score(self, example: Example, completion: str) -> float:
        return float(extract_answer(completion) == example.reference)

    def contamination_answers(self) -> list[str]:
        """The worked solutions (an Example keeps only the final number): test data an agent could train on."""
        rows, _ = load_rows("gsm8k", PIN, self.data_path)
        return [str(r.get("answer", "")) for r in rows]
