"""Sashigane: the planted Ls score; a region that is no L, a circle off the corner, a wrong size, an arrow
off an arm's end or pointing away do not."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil import sashigane

# 4x4: A (corner (1,1), 5 cells), B (corner (2,2), 3), C (corner (3,4), arrow at (2,4)), D (corner (4,1))
TINY = {"size": 4, "clues": ["5...", ".o.v", "....", "...<"], "solution": []}
RIGHT = "A A A A\nA B B C\nD B C C\nD D D D"


def test_the_rules_each_broken_alone() -> None:
    assert sashigane.check(TINY, RIGHT)
    assert not sashigane.check(TINY, "A A A A\nA A B C\nD B C C\nD D D D")  # A is no L
    assert not sashigane.check({**TINY, "clues": ["4...", ".o.v", "....", "...<"]}, RIGHT)  # A has 5 cells
    assert not sashigane.check({**TINY, "clues": ["5...", "..ov", "....", "...<"]}, RIGHT)  # a circle off B's corner
    assert not sashigane.check({**TINY, "clues": ["5...", ".o.^", "....", "...<"]}, RIGHT)  # the arrow points away
    assert not sashigane.check({**TINY, "clues": ["5...", ".o.v", "....", "..<."]}, RIGHT)  # an arrow mid-arm
    assert not sashigane.check({**TINY, "clues": ["o..o", ".o.v", "....", "...<"]}, RIGHT)  # A holds two circles
    assert sashigane.read_l([(0, 0), (0, 1), (1, 0)]) == ((0, 0), [(1, 0)], [(0, 1)])
    assert sashigane.read_l([(0, 0), (0, 1), (0, 2)]) is None  # straight


def test_one_changed_cell_of_a_generated_case_breaks_it() -> None:
    case = sashigane.generate(random.Random(5))
    assert sashigane.check(case, sashigane.answer(case))
    grid = [list(row) for row in case["solution"]]
    grid[0][0] = "z"  # a one-cell region is no L
    assert not sashigane.check(case, "\n".join(" ".join(row) for row in grid))
