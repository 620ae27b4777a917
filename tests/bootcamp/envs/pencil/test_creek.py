"""Creek: the planted shading scores; a wrong count at a shown point or unshaded cells cut in two does
not."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil import creek

# 3x3 cells, the centre shaded: the four inner points count 1, the corners 0
OPEN = [[-1] * 4 for _ in range(4)]
CENTRE = {"size": 3, "clues": [[0, -1, -1, -1], [-1, 1, 1, -1], [-1, 1, 1, -1], [-1, -1, -1, 0]],
          "solution": ["...", ".#.", "..."]}  # fmt: skip


def test_the_point_count() -> None:
    grid = ["#..", ".#.", "..#"]
    assert [creek.around(grid, 0, c) for c in range(4)] == [1, 1, 0, 0]
    assert creek.around(grid, 1, 1) == 2 and creek.around(grid, 2, 2) == 2 and creek.around(grid, 3, 3) == 1


def test_the_rules_each_broken_alone() -> None:
    assert creek.check(CENTRE, ". . .\n. # .\n. . .")
    assert not creek.check(CENTRE, ". . .\n. . .\n. . .")  # the inner counts off
    assert not creek.check(CENTRE, "# . .\n. # .\n. . .")  # a corner count off
    cut = {"size": 3, "clues": OPEN, "solution": ["..."] * 3}
    assert creek.check(cut, "# . .\n. . .\n. . .")
    assert not creek.check(cut, ". # .\n# . .\n. . .")  # the top-left cell cut off from the others
    assert not creek.check(cut, ". . .\n. . .")  # wrong shape


def test_a_generated_case_and_one_changed_cell() -> None:
    case = creek.generate(random.Random(5))
    assert creek.check(case, creek.answer(case))
    for fill in ".#":
        assert not creek.check(case, "\n".join([" ".join(fill * 6)] * 6))
    clues = case["clues"]
    r, c = next((r, c) for r in range(6) for c in range(6) if clues[r][c] >= 0)  # a shown point at a cell's corner
    grid = [list(row) for row in case["solution"]]
    grid[r][c] = "." if grid[r][c] == "#" else "#"  # flipping that cell changes the point's count
    assert not creek.check(case, "\n".join(" ".join(row) for row in grid))
