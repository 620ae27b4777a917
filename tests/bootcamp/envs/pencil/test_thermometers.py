"""Thermometers: the planted filling scores; a gap in a thermometer or a wrong count does not."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil import thermometers

# T1 (1,1)->(1,2), T2 (2,2)->(2,1): one filled cell in each row and column
TINY = {"size": 2, "thermometers": [[[0, 0], [0, 1]], [[1, 1], [1, 0]]], "rows": [1, 1], "cols": [1, 1],
        "solution": ["#.", ".#"]}  # fmt: skip


def test_the_rules_each_broken_alone() -> None:
    assert thermometers.check(TINY, "# .\n. #")
    assert not thermometers.check(TINY, ". #\n# .")  # the counts hold, but both thermometers have a gap
    assert not thermometers.check(TINY, "# #\n. #")  # no gap, but row 1 and column 2 hold two
    assert not thermometers.check(TINY, "# .\n. L")  # a cell outside the alphabet


def test_one_changed_cell_of_a_generated_case_breaks_it() -> None:
    case = thermometers.generate(random.Random(5))
    assert thermometers.check(case, thermometers.answer(case))
    grid = [list(row) for row in case["solution"]]
    grid[0][0] = "." if grid[0][0] == "#" else "#"
    assert not thermometers.check(case, "\n".join(" ".join(row) for row in grid))
    assert "#" not in thermometers.prompt(case).split("Answer:")[0]  # the filling is not shown
