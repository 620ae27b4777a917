"""Net: the planted turns score; a link left unmatched, a link off the grid, a loop or two separate
networks does not."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil import net

# 2x2 as shown: ES NW / E N; turned 0 3 / 3 0 it is ES SW / N N: three links, one tree
TINY = {"size": 2, "tiles": [["ES", "NW"], ["E", "N"]], "solution": ["03", "30"]}


def test_turning_a_tile() -> None:
    assert net.turn("NE", 1) == "ES" and net.turn("NE", 2) == "SW" and net.turn("NE", 3) == "NW"
    assert net.turn("NES", 1) == "ESW" and net.turn("NS", 2) == "NS" and net.turn("NESW", 3) == "NESW"


def test_the_rules_each_broken_alone() -> None:
    assert net.check(TINY, "0 3\n3 0")
    assert not net.check(TINY, "0 0\n3 0")  # NW at the top right points off the grid
    assert not net.check(TINY, "0 3\n0 0")  # E at the bottom left meets N: a link unmatched
    assert not net.check({**TINY, "tiles": [["ES", "SW"], ["NE", "NW"]]}, "0 0\n0 0")  # a loop: 4 links
    assert not net.check({**TINY, "tiles": [["E", "W"], ["E", "W"]]}, "0 0\n0 0")  # two separate networks
    assert not net.check(TINY, "0 4\n3 0")  # not a number of quarter turns


def test_a_generated_case_and_one_turned_tile() -> None:
    case = net.generate(random.Random(5))
    assert net.check(case, net.answer(case))
    grid = [list(row) for row in case["solution"]]
    r, c = next((r, c) for r in range(case["size"]) for c in range(case["size"])
                if case["tiles"][r][c] not in ("NS", "EW", "NESW"))  # fmt: skip
    grid[r][c] = str((int(grid[r][c]) + 1) % 4)
    assert not net.check(case, "\n".join(" ".join(row) for row in grid))
