"""Araf: the planted division scores; a region with one or three numbers, a size not strictly between its
numbers, or a letter whose cells are apart does not."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil import araf

# 3x3: numbers in the corners
TINY = {"size": 3, "clues": [[2, 0, 4], [0, 0, 0], [4, 0, 2]], "solution": []}


def test_the_rules_each_broken_alone() -> None:
    assert araf.check({**TINY, "clues": [[2, 0, 5], [0, 0, 0], [6, 0, 1]]}, "A A A\nA B B\nB B B")  # 4 and 5
    assert not araf.check(TINY, "A A A\nA B B\nB B B")  # 4 cells is not strictly between 2 and 4
    assert not araf.check(TINY, "A A A\nA A A\nA A A")  # one region, four numbers
    assert not araf.check(TINY, "A A B\nA A B\nC C B")  # a region with one number
    assert not araf.check({**TINY, "clues": [[1, 0, 3], [0, 0, 0], [1, 0, 3]]}, "A B A\nA B A\nA B A")  # A apart
    assert araf.check({**TINY, "clues": [[1, 0, 1], [0, 0, 0], [4, 0, 4]]}, "A B C\nA B C\nA B C") is False


def test_one_changed_cell_of_a_generated_case_breaks_it() -> None:
    case = araf.generate(random.Random(5))
    assert araf.check(case, araf.answer(case))
    grid = [list(row) for row in case["solution"]]
    grid[0][0] = "z"  # a one-cell region: no two numbers in it, or one number too few in its old region
    assert not araf.check(case, "\n".join(" ".join(row) for row in grid))
