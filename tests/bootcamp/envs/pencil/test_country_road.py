"""Country Road: the planted loop scores; a region entered twice or missed, a wrong count, two unvisited
neighbours in different regions, or no loop do not."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil import country_road

# 3x3: region A the left two columns, B the right column; the loop round the top-left 2x2 block visits A only
LOOP = "F 7 .\nL J .\n. . ."
BIG = "F - 7\n| . |\nL - J"


def test_the_rules_each_broken_alone() -> None:
    two = {"size": 3, "regions": ["AAB", "AAB", "CCB"], "numbers": ["...", "...", "..."], "solution": []}
    assert country_road.check({**two, "regions": ["AAB", "ABB", "ABB"]}, BIG)  # each region entered once
    assert not country_road.check(two, LOOP)  # B and C never visited (and their cells touch unvisited)
    assert not country_road.check({**two, "regions": ["BAC", "BAC", "BAC"]}, BIG)  # A (the middle) entered twice
    assert not country_road.check({**two, "regions": ["AAB", "ABB", "ABB"], "numbers": ["3..", "...", "..."]}, BIG)
    assert country_road.check({**two, "regions": ["AAB", "ABB", "ABB"], "numbers": ["4..", "...", ".4."]}, BIG)
    one = {"size": 3, "regions": ["AAA", "AAB", "AAB"], "numbers": ["...", "...", "..."], "solution": []}
    assert not country_road.check(one, LOOP)  # B never visited
    side = {"size": 3, "regions": ["AAB", "AAB", "CCC"], "numbers": ["...", "...", "..."], "solution": []}
    assert not country_road.check(side, ". . .\n. . .\n. . .")  # no loop at all
    assert not country_road.check(side, "F 7 .\n| | .\nL J .")  # B missed, off the loop beside C's (3,3)


def test_one_changed_cell_of_a_generated_case_breaks_it() -> None:
    case = country_road.generate(random.Random(5))
    assert country_road.check(case, country_road.answer(case))
    size = case["size"]
    r, c = next((r, c) for r in range(size) for c in range(size) if case["solution"][r][c] != ".")
    grid = [list(row) for row in case["solution"]]
    grid[r][c] = "."  # the loop broken
    assert not country_road.check(case, "\n".join(" ".join(row) for row in grid))
