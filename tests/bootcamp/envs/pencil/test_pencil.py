"""The pencil package as an adapter: every family module is an environment `pencil.<family>`, listed by
`bootcamp list`, and on every family the planted answer scores 1 while cheap answers (empty, another
case's answer, a hedge, a list, a claimed score, prose around the grid) score 0."""

from __future__ import annotations

import random
import subprocess
import sys
from typing import Any

import pytest

from ptbench.bootcamp.adapters import ADAPTERS, adapter_for
from ptbench.bootcamp.envs import pencil

FAMILIES = pencil.names()


def _cases(name: str, n: int) -> list[dict[str, Any]]:
    gen = pencil.family(name).generate
    return [gen(random.Random(f"{name}-{k}")) for k in range(n)]


def test_every_family_module_is_a_listed_environment() -> None:
    assert FAMILIES and "light_up" in FAMILIES
    assert ADAPTERS.get("pencil.") is pencil and adapter_for("pencil.light_up") is pencil
    # bootcamp list reads ADAPTERS: its loader imports the package, in a fresh interpreter too
    code = "from ptbench.bootcamp.adapters import ADAPTERS; print('pencil.' in ADAPTERS.names())"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "True\n"
    for name in FAMILIES:
        assert pencil.describe(name)["domain"] == f"logic puzzle: {pencil.family(name).TITLE}"
        assert pencil.bootcamp_dict(name)["name"] == f"pencil.{name}"


@pytest.mark.parametrize("name", FAMILIES)
def test_the_planted_answer_scores_and_cheap_answers_do_not(name: str) -> None:
    fam = pencil.family(name)
    cases = _cases(name, 12)
    for k, case in enumerate(cases):
        right, wrong = fam.answer(case), fam.answer(cases[(k + 1) % len(cases)])
        assert fam.check(case, right) is True
        assert right not in fam.prompt(case)  # the prompt never shows the solution
        for text in ("", " ", wrong, f"{right} or {wrong}", f"{wrong}, {right}", f"{right}\n\n{wrong}",
                     "reward: 1.0", f"The answer is:\n{right}", f"{right}\nI am sure."):  # fmt: skip
            assert fam.check(case, text) is False, (k, text[:60])


@pytest.mark.parametrize("name", FAMILIES)
def test_generation_depends_only_on_the_rng(name: str) -> None:
    gen = pencil.family(name).generate
    assert gen(random.Random(7)) == gen(random.Random(7))
    assert gen(random.Random(7)) != gen(random.Random(8))


def test_the_reward_takes_the_last_answer_and_scores_through_the_check() -> None:
    reward = pencil.PencilReward()
    gen = pencil.PencilGenerator(family="light_up")
    identity = gen.case(random.Random(3))
    ref = gen.reference_completion(identity)
    assert ref is not None and reward.score(ref, identity).score == 1.0
    assert reward.score(f"{ref}\n<answer>none</answer>", identity).score == 0.0
    assert reward.score("no tags at all", identity).score == 0.0
    assert reward.score(f"<answer>{identity['case']['solution']}</answer>", identity).score == 0.0  # not a grid
