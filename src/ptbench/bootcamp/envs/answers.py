"""Reward calculators shared by several environments: extract the answer from the final message only."""

from __future__ import annotations

import json
import math
import re
from abc import abstractmethod
from typing import Any, ClassVar

from ptbench.bootcamp.api import Identity, RewardCalculator, register_reward

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_ANSWER = re.compile(r"(?im)^\s*\**answer\**\s*[:=]\s*(.+?)\s*$")


def last_boxed(text: str) -> str | None:
    found = _BOXED.findall(text)
    return found[-1].strip() if found else None


def last_answer_line(text: str) -> str | None:
    found = _ANSWER.findall(text)
    return found[-1].strip().strip("`*.").strip() if found else None


def last_labelled(pattern: re.Pattern[str], text: str | None) -> str | None:
    """The group of the last `pattern` match, unless another JSON value follows it on its line:
    `Forecast: [1, 2] or [3, 4]` is a hedge between two answers (found by `bootcamp verify`: the first
    list got full credit when it was the right one), not the answer [1, 2]. Words after it (a claim,
    a comment) are ignored, as everywhere: only the value is scored."""
    text = text or ""
    found = list(pattern.finditer(text))
    if not found:
        return None
    last = found[-1]
    rest = text[last.end() :].split("\n", 1)[0]
    return None if "[" in rest or "{" in rest else last.group(1)


def as_number(text: str) -> float | None:
    try:
        value = float(text.replace(",", "").replace(" ", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def same_answer(got: str, expected: object, rel_tol: float = 1e-6) -> bool:
    """Numbers compare with a tolerance, everything else case-insensitively after trimming."""
    exp_text = str(expected)
    a, b = as_number(got), as_number(exp_text)
    if a is not None and b is not None:
        return math.isclose(a, b, rel_tol=rel_tol, abs_tol=rel_tol)
    return got.strip().strip("'\"").casefold() == exp_text.strip().casefold()


@register_reward("boxed_number")
class BoxedNumber(RewardCalculator):
    """The last `\\boxed{...}` (or `Answer: ...` line) in the final message, compared numerically."""

    def extract(self, text: str) -> str | None:
        return last_boxed(text) or last_answer_line(text)

    def verify(self, extracted: str, identity: Identity) -> float:
        return 1.0 if same_answer(extracted, identity[self.params.get("answer_key", "answer")]) else 0.0


@register_reward("exact_answer")
class ExactAnswer(RewardCalculator):
    """The last `Answer: ...` line (or `\\boxed{...}`) in the final message; numbers with tolerance."""

    def extract(self, text: str) -> str | None:
        return last_answer_line(text) or last_boxed(text)

    def verify(self, extracted: str, identity: Identity) -> float:
        return 1.0 if same_answer(extracted, identity[self.params.get("answer_key", "answer")]) else 0.0


class LabelledJson(RewardCalculator):
    """The answer is the last `<label>: <JSON>` in the final message (`pattern`: one group, the JSON),
    scored by `score_value` on the parsed value. JSON that does not parse, or a value `score_value`
    refuses with ValueError, scores 0: a malformed answer is a wrong one, never a crash."""

    pattern: ClassVar[re.Pattern[str]]

    def extract(self, text: str) -> str | None:
        return last_labelled(self.pattern, text)

    def verify(self, extracted: str, identity: Identity) -> float:
        try:
            return self.score_value(json.loads(extracted), identity)
        except ValueError:
            return 0.0

    @abstractmethod
    def score_value(self, value: Any, identity: Identity) -> float:
        """The reward of a parsed answer (0.0 to 1.0), computed from the case, never from the model's claims."""
