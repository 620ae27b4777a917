"""Sukoro: the planted numbers score; a wrong count, equal numbers side by side, two separate groups, an
overwritten shown cell or an empty grid do not."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil import sukoro

TINY = {"size": 3, "clues": ["1??", "???", "??x"], "solution": ["121", "...", "..."]}


def test_the_rules_each_broken_alone() -> None:
    assert sukoro.check(TINY, "1 2 1\n. . .\n. . .")
    assert not sukoro.check(TINY, "1 3 1\n. . .\n. . .")  # the 3 has two numbered neighbours
    loose = {**TINY, "clues": ["???", "???", "???"]}
    assert sukoro.check(loose, "2 2 .\n2 2 .\n. . .") is False  # counts right, equal numbers side by side
    assert not sukoro.check(loose, "1 2 1\n. . .\n1 2 1")  # two separate groups
    assert not sukoro.check({**TINY, "clues": ["x??", "???", "???"]}, "1 2 1\n. . .\n. . .")  # a shown x filled
    assert not sukoro.check(loose, ". . .\n. . .\n. . .")  # nothing written
    assert sukoro.check(loose, "1 . .\n2 . .\n1 . .")  # another valid filling scores


def test_one_changed_cell_of_a_generated_case_breaks_it() -> None:
    case = sukoro.generate(random.Random(5))
    assert sukoro.check(case, sukoro.answer(case))
    size = case["size"]
    for r in range(size):
        for c in range(size):
            grid = [list(row) for row in case["solution"]]
            grid[r][c] = "1" if grid[r][c] == "." else "."  # a number added or taken away changes a count
            assert not sukoro.check(case, "\n".join(" ".join(row) for row in grid)), (r, c)
