"""Magnets: the planted layout scores; half a magnet, equal signs side by side or a wrong count does not."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil import magnets
from ptbench.bootcamp.envs.pencil._grid import LABELS

# two horizontal dominoes: A on top, B below
TINY = {"size": 2, "dominoes": ["AA", "BB"], "plus_rows": [1, 1], "plus_cols": [1, 1], "minus_rows": [1, 1],
        "minus_cols": [1, 1], "solution": ["+-", "-+"]}  # fmt: skip


def test_the_rules_each_broken_alone() -> None:
    assert magnets.check(TINY, "+ -\n- +")
    assert not magnets.check(TINY, "+ -\n+ -")  # equal signs side by side (and the counts are off)
    loose = {**TINY, "plus_rows": [1, 0], "plus_cols": [1, 0], "minus_rows": [0, 1], "minus_cols": [0, 1]}
    assert not magnets.check(loose, "+ .\n. -")  # the counts hold, but both dominoes are half magnets
    blank = {**TINY, "plus_rows": [1, 0], "plus_cols": [1, 0], "minus_rows": [1, 0], "minus_cols": [0, 1]}
    assert magnets.check(blank, "+ -\n. .") and not magnets.check(blank, "- +\n. .")  # the wrong way round
    assert not magnets.check(TINY, "+ +\n- -")  # a magnet with equal ends


def test_a_tiling_covers_the_grid_and_one_changed_cell_breaks_a_case() -> None:
    case = magnets.generate(random.Random(5))
    assert sorted("".join(case["dominoes"])) == sorted(2 * LABELS[:18])
    assert magnets.check(case, magnets.answer(case))
    grid = [list(row) for row in case["solution"]]
    grid[0][0] = {"+": "-", "-": "+", ".": "+"}[grid[0][0]]
    assert not magnets.check(case, "\n".join(" ".join(row) for row in grid))
