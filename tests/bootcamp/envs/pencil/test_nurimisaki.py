"""Nurimisaki: the planted shading scores; a 2x2 block of one colour, a cape without a circle, a circle that
is no cape, a wrong run or cut-off white cells do not."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil import nurimisaki

# 3x3: white cells (0,0) (1,0) (1,1) (1,2) (0,2) (2,2); capes (0,0) runs 2 down, (0,2) runs 3 down, (2,2) up
TINY = {"size": 3, "clues": ["2.3", "...", "..o"], "solution": [".#.", "...", "##."]}


def test_the_rules_each_broken_alone() -> None:
    assert nurimisaki.check(TINY, ". # .\n. . .\n# # .")
    assert not nurimisaki.check(TINY, ". . .\n. . .\n. . .")  # 2x2 blocks all white
    assert not nurimisaki.check(TINY, ". # .\n. . .\n# # #")  # (2,2) shaded: the circle there is no cape
    assert not nurimisaki.check({**TINY, "clues": ["2.3", "...", "..."]}, ". # .\n. . .\n# # .")  # a cape uncircled
    assert not nurimisaki.check({**TINY, "clues": ["3.3", "...", "..o"]}, ". # .\n. . .\n# # .")  # a wrong run
    assert not nurimisaki.check({**TINY, "clues": ["o..", "...", "..o"]}, ". # .\n# # .\n# . .")  # cut off
    shaded = {"size": 3, "clues": ["o..", "...", "..."], "solution": []}
    assert not nurimisaki.check(shaded, ". . #\n# # #\n# # #")  # a 2x2 block all shaded


def test_one_changed_cell_of_a_generated_case_breaks_it() -> None:
    case = nurimisaki.generate(random.Random(5))
    assert nurimisaki.check(case, nurimisaki.answer(case))
    size = case["size"]
    r, c = next((r, c) for r in range(size) for c in range(size) if case["clues"][r][c] != ".")
    grid = [list(row) for row in case["solution"]]
    grid[r][c] = "#"  # a circled cell shaded
    assert not nurimisaki.check(case, "\n".join(" ".join(row) for row in grid))
