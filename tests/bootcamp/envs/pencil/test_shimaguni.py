"""Shimaguni: the planted islands score; a region with no island or two, islands touching across a border,
bordering islands of one size, or a wrong number do not."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil import shimaguni

# 3x3: region A the top row, B the rest
TINY = {"size": 3, "regions": ["AAA", "BBB", "BBB"], "numbers": ["...", "...", "..."], "solution": []}


def test_the_rules_each_broken_alone() -> None:
    assert shimaguni.check(TINY, "# . .\n. . .\n. # #")
    assert not shimaguni.check(TINY, "# . .\n. . .\n. . .")  # B has no island
    assert not shimaguni.check(TINY, "# . #\n. . .\n# # .")  # A has two islands
    assert not shimaguni.check(TINY, "# . .\n# # .\n. . .")  # the islands touch across the border
    assert not shimaguni.check(TINY, "# . .\n. . .\n. . #")  # bordering islands of one size
    assert not shimaguni.check({**TINY, "numbers": ["1..", "...", "..3"]}, "# . .\n. . .\n. # #")  # B is 2
    assert shimaguni.check({**TINY, "numbers": ["1..", "...", "..2"]}, "# . .\n. . .\n. # #")
    assert not shimaguni.check(TINY, "# # #\n# # #\n# # #")  # everything shaded


def test_one_changed_cell_of_a_generated_case_breaks_it() -> None:
    case = shimaguni.generate(random.Random(5))
    assert shimaguni.check(case, shimaguni.answer(case))
    size = case["size"]
    r, c = next((r, c) for r in range(size) for c in range(size) if case["numbers"][r][c] != ".")
    grid = [list(row) for row in case["solution"]]
    for a in range(size):
        for b in range(size):
            if case["regions"][a][b] == case["regions"][r][c]:
                grid[a][b] = "#" if (a, b) == (r, c) else "."  # the numbered region's island one cell
    fixed = "\n".join(" ".join(row) for row in grid)
    assert case["numbers"][r][c] == "1" or not shimaguni.check(case, fixed)
