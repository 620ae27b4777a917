"""Kurodoko: the planted shading scores; black cells side by side, cut-off white cells, a shaded number or
a number that sees another count do not."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil import kurodoko

# 3x3, one black cell in the middle of the top row: the top-left corner sees 3, the centre sees 4
TINY = {"size": 3, "clues": [[3, 0, 0], [0, 4, 0], [0, 0, 0]], "solution": [".#.", "...", "..."]}


def test_the_rules_each_broken_alone() -> None:
    assert kurodoko.check(TINY, ". # .\n. . .\n. . .")
    assert kurodoko.check(TINY, ". . .\n. . #\n. . .") is False  # the centre sees 4, but the corner sees 5
    two = {"size": 3, "clues": [[0] * 3, [0] * 3, [0] * 3], "solution": []}
    assert kurodoko.check(two, ". . .\n. . .\n. # .") and not kurodoko.check(two, ". . .\n. . .\n# # .")  # sides
    assert not kurodoko.check(two, ". # .\n# . .\n. . .")  # the corner cut off from the other white cells
    assert not kurodoko.check(TINY, "# . .\n. . .\n. . .")  # the numbered corner shaded
    assert not kurodoko.check(TINY, ". . .\n. . .\n. . .")  # nothing shaded: the corner sees 5


def test_one_changed_cell_of_a_generated_case_breaks_it() -> None:
    case = kurodoko.generate(random.Random(5))
    assert kurodoko.check(case, kurodoko.answer(case))
    r, c = next((r, c) for r in range(case["size"]) for c in range(case["size"]) if case["solution"][r][c] == "#")
    grid = [list(row) for row in case["solution"]]
    grid[r][c] = "."  # unshading a black cell lets a number see further (or breaks no rule: then the case is loose)
    assert not kurodoko.check(case, "\n".join(" ".join(row) for row in grid)) or not any(
        case["clues"][a][b] for a in range(case["size"]) for b in range(case["size"]) if a == r or b == c
    )
