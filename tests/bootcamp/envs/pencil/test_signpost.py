"""Signpost: the planted numbering scores; a repeated number, a moved shown number, a step against an
arrow or the last number off the arrowless cell does not."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil import signpost

# 2x2: 1 at top left (E), 2 top right (SW), 3 bottom left (E), 4 bottom right (*)
TINY = {"size": 2, "arrows": [["E", "SW"], ["E", "*"]], "shown": [[1, 0], [0, 4]], "solution": [[1, 2], [3, 4]]}


def test_the_rules_each_broken_alone() -> None:
    assert signpost.check(TINY, "1 2\n3 4")
    assert not signpost.check(TINY, "1 2\n2 4")  # a number twice (3 missing)
    assert not signpost.check(TINY, "1 3\n2 4")  # 1 -> 2 goes down, not along its arrow E
    assert not signpost.check({**TINY, "shown": [[0, 0], [0, 0]]}, "2 3\n1 4")  # 1 -> 2 against the arrow
    assert not signpost.check({**TINY, "shown": [[0, 0], [2, 0]]}, "1 2\n3 4")  # a shown number moved
    assert not signpost.check({**TINY, "arrows": [["E", "SW"], ["*", "N"]]}, "1 2\n3 4")  # 4 off the * cell
    assert not signpost.check(TINY, "1 2\n3 04") and not signpost.check(TINY, "1 2\n3 5")  # not 1..4 as written
    assert not signpost.check(TINY, "12\n34")  # numbers must be separated


def test_a_generated_path_follows_its_arrows_and_one_swap_breaks_it() -> None:
    case = signpost.generate(random.Random(5))
    assert signpost.check(case, signpost.answer(case))
    size = case["size"]
    assert sorted(v for row in case["solution"] for v in row) == list(range(1, size * size + 1))
    grid = [row[:] for row in case["solution"]]
    free = [(r, c) for r in range(size) for c in range(size) if not case["shown"][r][c]]
    (r1, c1), (r2, c2) = free[0], free[1]
    grid[r1][c1], grid[r2][c2] = grid[r2][c2], grid[r1][c1]
    assert not signpost.check(case, "\n".join(" ".join(map(str, row)) for row in grid))
