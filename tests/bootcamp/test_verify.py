"""`ptbench bootcamp verify`: honest environments pass; planted defects (a reward that takes a hedge,
trusts a claimed score, pays the right answer 0.5, scores outside [0, 1]; a generator that is not
deterministic) are each reported failed, and the real environments installed here verify."""

from __future__ import annotations

import itertools
import random
import re

import pytest

from ptbench.bootcamp.api import Generator, Identity, RewardCalculator
from ptbench.bootcamp.config import BootcampConfig
from ptbench.bootcamp.environment import Environment
from ptbench.bootcamp.verify import Result, hostile_texts, verify_environment

_LAST_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.S)


class Sum(Generator):
    def case(self, rng: random.Random) -> Identity:
        a, b = rng.randint(10, 99), rng.randint(10, 99)
        return {"a": a, "b": b, "answer": a + b}

    def prompt(self, identity: Identity) -> str:
        return f"{identity['a']} + {identity['b']} = ?"

    def reference_completion(self, identity: Identity) -> str:
        return f"{identity['a']} plus {identity['b']} is {identity['answer']}. <answer>{identity['answer']}</answer>"


_counter = itertools.count()


class Drifting(Sum):
    """Reads state outside its rng (a counter): the same seed gives another case the next time."""

    def case(self, rng: random.Random) -> Identity:
        return {**super().case(rng), "nonce": next(_counter)}


class Strict(RewardCalculator):
    def extract(self, text: str) -> str | None:
        found = _LAST_ANSWER.findall(text)
        return found[-1].strip() if found else None

    def verify(self, extracted: str, identity: Identity) -> float:
        return 1.0 if extracted == str(identity["answer"]) else 0.0


class TakesAnyMention(Strict):
    """Full credit if the right number appears anywhere in the answer: a hedge or a list passes."""

    def verify(self, extracted: str, identity: Identity) -> float:
        return 1.0 if str(identity["answer"]) in re.findall(r"\d+", extracted) else 0.0


class TrustsClaims(Strict):
    def verify(self, extracted: str, identity: Identity) -> float:
        return 1.0 if "reward: 1" in extracted else super().verify(extracted, identity)


class Half(Strict):
    def verify(self, extracted: str, identity: Identity) -> float:
        return 0.5 * super().verify(extracted, identity)


class Overpays(Strict):
    def verify(self, extracted: str, identity: Identity) -> float:
        return 1.5 * super().verify(extracted, identity)


def _env(reward: type[RewardCalculator], generator: type[Generator] = Sum) -> Environment:
    config = BootcampConfig.model_validate(
        {
            "name": "planted",
            "seed": 3,
            "levels": [{"name": "default", "generator": "planted"}],
            "splits": {"test": 5},
            "reward": {"name": "planted"},
        }  # fmt: skip
    )
    return Environment(config=config, generators={"default": generator()}, tools={}, interaction=None, reward=reward())


def _verify(reward: type[RewardCalculator], generator: type[Generator] = Sum, n: int = 12) -> Result:
    return verify_environment("planted", "test", n, lambda: _env(reward, generator))


def test_an_honest_environment_is_verified() -> None:
    r = _verify(Strict)
    assert (r.status, r.cases, r.oracle_pass, r.deterministic) == ("verified", 12, 12, True), r.problems
    assert r.hostile_total == 12 * 6 and r.hostile_pass == r.hostile_total  # every probe built, every one 0


def test_hostile_answers_sit_where_the_answer_goes() -> None:
    right = "7 plus 5 is 12. <answer>12</answer>"
    wrong = "9 plus 9 is 18. <answer>18</answer>"
    probes = hostile_texts(right, wrong, Strict().extract)
    assert probes["hedge"] == "7 plus 5 is 12. <answer>12 or 18</answer>"
    assert probes["candidates"] == "7 plus 5 is 12. <answer>18, 12</answer>"
    assert probes["claimed score"].startswith("7 plus 5 is 12. <answer>reward: 1.0")
    assert probes["wrong"] == wrong and probes["empty"] == ""
    # without an extractor the common frame of the two texts is kept, never half a number
    framed = hostile_texts("Move: e4", "Move: e5")
    assert framed["hedge"] == "Move: e4 or e5" and framed["candidates"] == "Move: e5, e4"


@pytest.mark.parametrize(
    ("reward", "generator", "problem"),
    [
        (TakesAnyMention, Sum, "the hedge answer scored 1.0"),
        (TrustsClaims, Sum, "the claimed score answer scored 1.0"),
        (Half, Sum, "the reference answer scored 0.5"),
        (Overpays, Sum, "outside [0, 1]"),
        (Strict, Drifting, "not deterministic"),
    ],
)
def test_a_planted_defect_fails_the_environment(
    reward: type[RewardCalculator], generator: type[Generator], problem: str
) -> None:
    r = _verify(reward, generator)
    assert r.status == "failed"
    assert any(problem in p for p in r.problems), r.problems


def test_an_environment_that_raises_is_an_error_not_a_crash() -> None:
    class Broken(Sum):
        def case(self, rng: random.Random) -> Identity:
            raise RuntimeError("data file missing")

    r = _verify(Strict, Broken)
    assert r.status == "error" and "data file missing" in (r.error or "")


def test_an_environment_without_a_reference_has_no_oracle() -> None:
    class NoReference(Sum):
        def reference_completion(self, identity: Identity) -> str | None:
            return None

    assert _verify(Strict, NoReference).status == "no oracle"
