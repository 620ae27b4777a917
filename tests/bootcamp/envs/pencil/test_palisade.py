"""Palisade: the planted division scores; a region of the wrong size, two regions sharing a letter side
by side, or a wrong border count does not."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil import palisade

# 2x4 in regions of 4: the two rows (AAAA / BBBB); the corner shows 2 borders, a middle cell 2
TINY = {"size": 2, "region_size": 4, "clues": [[2, -1], [-1, -1]], "solution": ["AA", "BB"]}
WIDE = {"size": 4, "region_size": 4, "clues": [[3, 2, 2, 3]] + [[-1] * 4] * 3,
        "solution": ["AAAA", "BBBB", "CCCC", "DDDD"]}  # fmt: skip


def test_the_rules_each_broken_alone() -> None:
    assert palisade.check(WIDE, "A A A A\nB B B B\nC C C C\nD D D D")
    assert palisade.check(WIDE, "X X X X\nB B B B\nX X X X\nD D D D")  # any letters: regions by connection
    assert not palisade.check(WIDE, "A A A A\nA A A A\nC C C C\nD D D D")  # one letter side by side: 8 cells
    assert not palisade.check(WIDE, "A A B B\nA A B B\nC C D D\nC C D D")  # sizes right, border counts wrong
    assert not palisade.check(WIDE, "A A A B\nB B B A\nC C C C\nD D D D")  # regions of 3 and 1
    assert not palisade.check(WIDE, "A A A A\nB B B B\nC C C C\nD D D 1")  # not a letter
    assert not palisade.check({**TINY, "size": 2, "region_size": 2}, "A A\nB B\nC C")  # wrong shape


def test_the_border_count() -> None:
    ids = palisade.regions(["AAB", "ABB", "CCC"])
    assert [palisade.borders(ids, 0, c) for c in range(3)] == [2, 3, 3]
    assert palisade.borders(ids, 1, 1) == 3 and palisade.borders(ids, 2, 1) == 2


def test_a_generated_case_and_one_changed_cell() -> None:
    case = palisade.generate(random.Random(5))
    assert palisade.check(case, palisade.answer(case))
    grid = [list(row) for row in case["solution"]]
    grid[0][0] = "z"
    assert not palisade.check(case, "\n".join(" ".join(row) for row in grid))
