"""Aquarium: the planted water scores; water that is not level, or a wrong count, does not."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil import aquarium

# tank A is the left column, tank B the right one; A is full, B holds its bottom cell
TINY = {"size": 2, "tanks": ["AB", "AB"], "rows": [1, 2], "cols": [2, 1], "solution": ["~.", "~~"]}


def test_the_rules_each_broken_alone() -> None:
    assert aquarium.check(TINY, "~ .\n~ ~")
    assert not aquarium.check(TINY, "~ ~\n~ .")  # the counts hold, but B's water floats above air
    assert not aquarium.check(TINY, "~ ~\n~ ~")  # level, but row 1 and column 2 hold two
    wide = {"size": 2, "tanks": ["AA", "AA"], "rows": [0, 1], "cols": [1, 0], "solution": []}
    assert not aquarium.check(wide, ". .\n~ .")  # the counts hold, but the bottom row of one tank is half full


def test_one_changed_cell_of_a_generated_case_breaks_it() -> None:
    case = aquarium.generate(random.Random(5))
    assert aquarium.check(case, aquarium.answer(case))
    grid = [list(row) for row in case["solution"]]
    grid[2][3] = "." if grid[2][3] == "~" else "~"
    assert not aquarium.check(case, "\n".join(" ".join(row) for row in grid))
    assert "~" not in aquarium.prompt(case).split("Answer:")[0]
