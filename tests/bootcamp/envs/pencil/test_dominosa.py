"""Dominosa: the planted cutting scores; a partner that does not point back or a pair used twice does not."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil import dominosa

# the double-1 set (0-0, 0-1, 1-1) on a 2x3 grid
TINY = {"top": 1, "rows": 2, "cols": 3, "numbers": [[0, 0, 1], [1, 0, 1]], "solution": ["RLD", "RLU"]}


def test_the_rules_each_broken_alone() -> None:
    assert dominosa.check(TINY, "R L D\nR L U")  # 0-0, 1-0, 1-1
    assert not dominosa.check(TINY, "D R L\nU R L")  # 0-1, 0-1, 0-1: one pair three times
    assert not dominosa.check(TINY, "R L D\nR L D")  # the bottom right points off the grid
    assert not dominosa.check(TINY, "R R D\nR L U")  # (1,2) points right, (1,3) does not point back
    assert not dominosa.check(TINY, "R L X\nR L U")


def test_one_changed_cut_of_a_generated_case_breaks_it() -> None:
    case = dominosa.generate(random.Random(5))
    assert dominosa.check(case, dominosa.answer(case))
    assert sorted(v for row in case["numbers"] for v in row) == sorted(
        v for a in range(case["top"] + 1) for b in range(a, case["top"] + 1) for v in (a, b)
    )
    grid = [list(row) for row in case["solution"]]
    grid[0][0] = "D" if grid[0][0] == "R" else "R"
    assert not dominosa.check(case, "\n".join(" ".join(row) for row in grid))


def test_no_case_is_solved_by_a_plain_cutting() -> None:
    for seed in range(60):
        case = dominosa.generate(random.Random(seed))
        assert not any(dominosa.check(case, cut) for cut in dominosa._plain_cuts(case["rows"], case["cols"]))
    assert dominosa.check(TINY, dominosa._plain_cuts(2, 3)[0]) is False and len(dominosa._plain_cuts(2, 4)) == 2
