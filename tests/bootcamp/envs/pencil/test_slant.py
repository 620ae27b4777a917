"""Slant: the planted diagonals score; a loop or a wrong count at a numbered point does not."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil import slant

FREE = {"size": 2, "clues": [[-1] * 3 for _ in range(3)], "solution": []}


def test_the_rules_each_broken_alone() -> None:
    assert slant.check(FREE, "/ /\n/ /") and slant.check(FREE, "\\ \\\n/ /")
    assert not slant.check(FREE, "/ \\\n\\ /")  # a diamond around the centre point: a loop
    counted = {**FREE, "clues": [[-1, -1, -1], [-1, 0, -1], [-1, -1, -1]]}
    assert not slant.check(counted, "/ /\n/ /")  # no loop, but the centre point is touched by two
    assert slant.check(counted, "\\ /\n/ \\") is False  # the centre touched by four
    counted = {**FREE, "clues": [[1, -1, -1], [-1, 2, -1], [-1, -1, 1]]}
    assert slant.check(counted, "\\ /\n/ \\") is False and slant.check(counted, "\\ \\\n\\ \\")
    assert not slant.check(FREE, "/ |\n/ /")  # a cell outside the alphabet


def test_one_changed_cell_of_a_generated_case_breaks_it() -> None:
    case = slant.generate(random.Random(5))
    assert slant.check(case, slant.answer(case))
    grid = [list(row) for row in case["solution"]]
    grid[0][0] = "/" if grid[0][0] == "\\" else "\\"
    flipped = "\n".join(" ".join(row) for row in grid)
    corners = [case["clues"][0][0], case["clues"][0][1], case["clues"][1][0], case["clues"][1][1]]
    assert not slant.check(case, flipped) or all(v < 0 for v in corners)
