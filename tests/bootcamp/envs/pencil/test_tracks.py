"""Tracks: the planted railway scores; a broken railway, a loop beside it, a crossing, an overwritten
shown piece or a wrong count does not."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil import tracks

# 3x3: in at the left of row 1, out at the bottom of column 3:  - - 7 / . . | / . . |
TINY = {"size": 3, "entrance": 0, "exit": 2, "shown": ["???", "???", "???"], "rows": [3, 1, 1], "cols": [1, 1, 3],
        "solution": ["--7", "..|", "..|"]}  # fmt: skip


def _grid(*rows: str) -> str:
    return "\n".join(" ".join(row) for row in rows)


def test_the_rules_each_broken_alone() -> None:
    assert tracks.check(TINY, _grid("--7", "..|", "..|"))
    assert not tracks.check(TINY, _grid("--7", "...", "..|"))  # broken off
    assert not tracks.check(TINY, _grid("--7", "..J", "..|"))  # a piece that does not join its neighbour
    assert not tracks.check(TINY, _grid("--7", "..|", "..J"))  # no exit at the bottom
    loop = {**TINY, "size": 4, "exit": 3, "shown": ["????"] * 4, "rows": [4, 3, 3, 1], "cols": [3, 3, 1, 4]}
    assert not tracks.check(loop, _grid("---7", "F7.|", "LJ.|", "...|"))  # a loop beside the railway
    longer = {**TINY, "rows": [3, 3, 3], "cols": [3, 3, 3]}
    assert tracks.check(longer, _grid("--7", "F-J", "L-7"))  # another railway: any valid one scores
    assert not tracks.check({**longer, "rows": [3, 3, 1], "cols": [2, 2, 3]}, _grid("--7", "F-J", "|.."))  # wrong exit
    shown = {**TINY, "shown": ["???", "???", "??J"]}
    assert not tracks.check(shown, _grid("--7", "..|", "..|"))  # the shown piece overwritten
    assert not tracks.check({**TINY, "rows": [3, 1, 2]}, _grid("--7", "..|", "..|"))  # a count off


def test_a_generated_railway_runs_from_the_entrance_to_the_exit() -> None:
    case = tracks.generate(random.Random(5))
    assert tracks.check(case, tracks.answer(case))
    assert sum(case["rows"]) >= 12 and case["solution"][case["entrance"]][0] in "-J7"
    assert case["solution"][-1][case["exit"]] in "|7F"
    grid = [list(row) for row in case["solution"]]
    r, c = next((r, c) for r in range(6) for c in range(6) if grid[r][c] != ".")
    grid[r][c] = "."
    assert not tracks.check(case, "\n".join(" ".join(row) for row in grid))
