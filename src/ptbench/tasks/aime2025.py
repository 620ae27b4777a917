"""AIME 2025 (30 problems, both exams): the final answer must be equivalent to the reference.

Equivalence is math-verify's (the checker of Hugging Face's open-r1 / lighteval): the model's last
boxed or otherwise marked answer is parsed (LaTeX or plain) and compared symbolically, so
"\\boxed{070}", "70", "$70$" and "\\frac{140}{2}" all match 70.
"""

from __future__ import annotations

from ptbench.tasks._common import BenchmarkTask, DatasetPin, load_rows
from ptbench.tasks.base import Example, register_task

# No verified commit hash for this dataset was at hand: set `revision` before publishing numbers.
PIN = DatasetPin(id="math-ai/aime25", split="test", revision=None)

INSTRUCTION = "Solve the following math problem step by step. Put your final answer within \\boxed{{}}.\n\n{problem}"


def is_equivalent(completion: str, reference: str) -> bool:
    """True when math-verify finds the completion's answer equal to the reference."""
    from math_verify import parse, verify

    gold = parse(f"${reference}$")
    answer = parse(completion)
    if not gold or not answer:
        return False
    try:
        return bool(verify(gold, answer))
    except Exception:  # math-verify raises on some malformed expressions: not equivalent
        return False


@register_task("aime2025")
class AIME2025(BenchmarkTask):
    primary_metric = "accuracy"
    base_stop = ("\nProblem:",)

    def test_examples(self, limit: int | None = None) -> list[Example]:
        rows, self.dataset = load_rows("aime2025", PIN, self.data_path)
        rows = rows[:limit] if limit else rows
        return [
            Example(
                id=str(r.get("id", i)),
                reference=str(r["answer"]).strip(),
                prompt=self._prompt(INSTRUCTION.format(problem=r["problem"]), "aime_base.jinja", problem=r["problem"]),
            )
            for i, r in enumerate(rows)
        ]

    def score(self, example: Example, completion: str) -> float:
        return float(is_equivalent(completion, example.reference))
