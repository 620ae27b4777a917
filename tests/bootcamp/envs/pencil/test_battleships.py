"""Battleships: the planted fleet scores; a bent ship, ships touching, a wrong fleet, a shown cell
overwritten or a wrong count does not."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil import battleships

# a 4x4 grid, fleet 2 and 1: the 2 across the top left, the 1 at the bottom right
TINY = {"size": 4, "fleet": [2, 1], "shown": ["????", "????", "????", "????"], "rows": [2, 0, 0, 1],
        "cols": [1, 1, 0, 1], "solution": ["##..", "....", "....", "...#"]}  # fmt: skip


def _grid(*rows: str) -> str:
    return "\n".join(" ".join(row) for row in rows)


def test_the_rules_each_broken_alone() -> None:
    assert battleships.check(TINY, _grid("##..", "....", "....", "...#"))
    bent = {**TINY, "fleet": [3], "rows": [2, 1, 0, 0], "cols": [1, 2, 0, 0]}
    assert not battleships.check(bent, _grid("##..", ".#..", "....", "...."))  # an L is no ship
    corner = {**TINY, "rows": [2, 0, 1, 0], "cols": [1, 1, 1, 0]}
    assert battleships.check(corner, _grid("##..", "....", "..#.", "...."))
    corner = {**TINY, "rows": [2, 1, 0, 0], "cols": [1, 1, 1, 0]}
    assert not battleships.check(corner, _grid("##..", "..#.", "....", "...."))  # touching at a corner
    three = {**TINY, "fleet": [1, 1, 1], "rows": [1, 0, 1, 1], "cols": [1, 0, 1, 1]}
    assert battleships.check(three, _grid("#...", "....", "..#.", "...#")) is False  # touching at a corner
    assert not battleships.check(TINY, _grid("#.#.", "....", "....", "...#"))  # fleet 1, 1, 1, not 2, 1
    shown = {**TINY, "shown": ["?w??", "????", "????", "????"]}
    assert not battleships.check(shown, _grid("##..", "....", "....", "...#"))  # the shown water overwritten
    assert not battleships.check(TINY, _grid(".##.", "....", "....", "...#"))  # fleet right, counts wrong


def test_one_changed_cell_of_a_generated_case_breaks_it() -> None:
    case = battleships.generate(random.Random(5))
    assert battleships.check(case, battleships.answer(case))
    grid = [list(row) for row in case["solution"]]
    grid[1][1] = "." if grid[1][1] == "#" else "#"
    assert not battleships.check(case, "\n".join(" ".join(row) for row in grid))
