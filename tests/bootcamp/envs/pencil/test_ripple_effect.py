"""Ripple Effect: the planted filling scores; a region missing a number, equal numbers too close in a row or
column, or an overwritten given number do not."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil import ripple_effect

# 2x2: two upright regions of 2 cells
TINY = {"size": 2, "regions": ["AB", "AB"], "clues": ["..", ".."], "solution": ["12", "21"]}


def test_the_rules_each_broken_alone() -> None:
    assert ripple_effect.check(TINY, "1 2\n2 1")
    assert not ripple_effect.check(TINY, "1 2\n1 2")  # region A holds 1 twice
    assert not ripple_effect.check(TINY, "1 1\n2 2")  # two 1s side by side in a row (regions are fine)
    assert not ripple_effect.check({**TINY, "clues": ["2.", ".."]}, "1 2\n2 1")  # a given number overwritten
    assert not ripple_effect.check(TINY, "1 3\n2 1")  # 3 in a region of 2
    # two 2s need two cells between them: one between is too close, two is far enough
    assert not ripple_effect._fits([[2, 0, 0, 0]] + [[0] * 4] * 3, 0, 2, 2)
    assert ripple_effect._fits([[2, 0, 0, 0]] + [[0] * 4] * 3, 0, 3, 2)
    assert not ripple_effect._fits([[2, 0, 0, 0], [0] * 4, [0] * 4, [0] * 4], 2, 0, 2)


def test_one_changed_cell_of_a_generated_case_breaks_it() -> None:
    case = ripple_effect.generate(random.Random(5))
    assert ripple_effect.check(case, ripple_effect.answer(case))
    size = case["size"]
    for r in range(size):
        for c in range(size):
            grid = [list(row) for row in case["solution"]]
            grid[r][c] = "9" if grid[r][c] != "9" else "1"  # no region is 9 cells: the region breaks
            assert not ripple_effect.check(case, "\n".join(" ".join(row) for row in grid))
