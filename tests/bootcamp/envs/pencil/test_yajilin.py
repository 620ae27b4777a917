"""Yajilin: the planted loop and shading score; shaded cells side by side, a broken loop, a wrong count, a
clue cell shaded or two loops do not."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil import yajilin

# 3x3: a loop round the top-left 2x2 block, shaded (1,2) and (2,1), clues at the other corners
TINY = {"size": 3, "clues": [[0, 2, "down", 1], [2, 0, "right", 1], [2, 2, "up", 1]], "solution": []}


def test_the_rules_each_broken_alone() -> None:
    assert yajilin.check(TINY, "F 7 *\nL J #\n* # *")
    off = [[0, 2, "down", 2], [2, 0, "right", 1], [2, 2, "up", 1]]
    assert not yajilin.check({**TINY, "clues": off}, "F 7 *\nL J #\n* # *")  # a count off
    assert not yajilin.check(TINY, "F 7 #\nL J #\n* # *")  # a clue cell shaded
    two = {"size": 3, "clues": [[2, 0, "right", 1], [2, 2, "up", 2]], "solution": []}
    assert not yajilin.check(two, "F 7 #\nL J #\n* # *")  # shaded cells side by side
    assert not yajilin.check(TINY, "F - *\nL J #\n* # *")  # the loop broken
    big = {"size": 4, "clues": [], "solution": []}
    assert yajilin.check(big, "F - - 7\n| F 7 |\n| L J |\nL - - J") is False  # two loops
    assert yajilin.check(big, "F - - 7\n| F - J\n| L - 7\nL - - J")  # one loop through every cell


def test_one_changed_cell_of_a_generated_case_breaks_it() -> None:
    case = yajilin.generate(random.Random(5))
    assert yajilin.check(case, yajilin.answer(case))
    size = case["size"]
    for r in range(size):
        for c in range(size):
            grid = [list(row) for row in case["solution"]]
            grid[r][c] = "*" if grid[r][c] != "*" else "#"  # a clue cell moved or shaded
            assert not yajilin.check(case, "\n".join(" ".join(row) for row in grid))
    r, c = next((r, c) for r in range(size) for c in range(size) if case["solution"][r][c] not in "#*")
    grid = [list(row) for row in case["solution"]]
    grid[r][c] = "#"  # a loop cell shaded: the loop breaks
    assert not yajilin.check(case, "\n".join(" ".join(row) for row in grid))
