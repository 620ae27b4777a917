"""Kropki: the planted square scores; a repeated number, a white dot without consecutive numbers, a
black dot without a double, or a pair with no dot that is consecutive does not."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil import kropki

# 3x3 Latin square 1 2 3 / 2 3 1 / 3 1 2 and its dots
SQUARE = {"size": 3, "across": ["xo", "o-", "-x"], "down": ["oo-", "o-x"],
          "solution": [[1, 2, 3], [2, 3, 1], [3, 1, 2]]}  # fmt: skip


def test_the_dots() -> None:
    assert kropki.fits(3, 4, "o") and kropki.fits(2, 4, "x") and kropki.fits(1, 4, "-")
    assert kropki.fits(1, 2, "o") and kropki.fits(2, 1, "x") and not kropki.fits(1, 2, "-")
    assert not kropki.fits(2, 4, "o") and not kropki.fits(3, 4, "x") and not kropki.fits(3, 6, "-")


def test_the_rules_each_broken_alone() -> None:
    assert kropki.check(SQUARE, "1 2 3\n2 3 1\n3 1 2")
    assert not kropki.check(SQUARE, "1 2 3\n2 3 1\n3 1 1")  # 1 twice in the last row
    assert not kropki.check(SQUARE, "1 2 3\n3 1 2\n2 3 1")  # a Latin square, the dots broken
    assert kropki.check({**SQUARE, "across": ["xo", "o-", "-o"]}, "1 2 3\n2 3 1\n3 1 2")  # 1-2: either dot
    assert not kropki.check({**SQUARE, "across": ["xo", "o-", "oo"]}, "1 2 3\n2 3 1\n3 1 2")  # 3-1 under a white dot
    assert not kropki.check({**SQUARE, "across": ["xo", "ox", "-x"]}, "1 2 3\n2 3 1\n3 1 2")  # 3-1 under a black dot
    assert not kropki.check({**SQUARE, "down": ["-o-", "o-x"]}, "1 2 3\n2 3 1\n3 1 2")  # 1 over 2 with no dot
    assert not kropki.check(SQUARE, "1 2 3\n2 3 1\n3 1 4")  # a number out of range


def test_a_generated_case_and_one_swap() -> None:
    case = kropki.generate(random.Random(5))
    assert kropki.check(case, kropki.answer(case))
    grid = [row[:] for row in case["solution"]]
    grid[0][0], grid[0][1] = grid[0][1], grid[0][0]
    assert not kropki.check(case, "\n".join(" ".join(map(str, row)) for row in grid))
