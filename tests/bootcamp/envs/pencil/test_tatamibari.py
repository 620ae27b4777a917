"""Tatamibari: the planted tiling scores; a region that is no rectangle, a rectangle of the wrong shape
for its symbol, a rectangle with no symbol or two, or four rectangles meeting at a point do not."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil import tatamibari

# 3x3: a 2x2 square (+) at the top left, a 2x1 strip (|) beside it, a 1x3 strip (-) below: AAB / AAB / CCC
TINY = {"size": 3, "clues": ["+..", "..|", ".-."], "solution": []}


def test_the_rules_each_broken_alone() -> None:
    assert tatamibari.check(TINY, "A A B\nA A B\nC C C")
    assert not tatamibari.check(TINY, "A A B\nA B B\nC C C")  # A and B are no rectangles
    assert not tatamibari.check({**TINY, "clues": ["-..", "..|", ".-."]}, "A A B\nA A B\nC C C")  # a square with -
    assert not tatamibari.check({**TINY, "clues": ["+..", "...", ".-."]}, "A A B\nA A B\nC C C")  # B has no symbol
    assert not tatamibari.check({**TINY, "clues": ["+..", "..|", "--."]}, "A A B\nA A B\nC C C")  # C has two
    four = {"size": 2, "clues": ["++", "++"], "solution": []}
    assert not tatamibari.check(four, "A B\nC D")  # four squares meet in the middle
    assert not tatamibari.check(TINY, "A A A\nA A A\nA A A")  # one region, three symbols


def test_one_changed_cell_of_a_generated_case_breaks_it() -> None:
    case = tatamibari.generate(random.Random(5))
    assert tatamibari.check(case, tatamibari.answer(case))
    grid = [list(row) for row in case["solution"]]
    r, c = next((r, c) for r in range(case["size"]) for c in range(case["size"]) if case["clues"][r][c] == ".")
    grid[r][c] = "z"  # a one-cell region without a symbol
    assert not tatamibari.check(case, "\n".join(" ".join(row) for row in grid))
