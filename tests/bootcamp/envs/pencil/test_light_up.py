"""Light Up: the planted lamps score, so does any other valid placement; each rule, broken alone, does not."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil import light_up

# . 1 .     lamps at (0,0) and (1,2): every white cell lit, none sees another, the 1 touches one
# . . .
TINY = {"rows": 2, "cols": 3, "grid": [".1.", "..."], "solution": ["L1.", "..L"]}


def test_a_valid_placement_scores_even_if_it_is_not_the_planted_one() -> None:
    assert light_up.check(TINY, light_up.answer(TINY)) and light_up.check(TINY, "L1.\n..L")
    assert light_up.check(TINY, ". 1 L\nL . .")  # the mirror image


def test_each_rule_broken_alone_scores_0() -> None:
    assert not light_up.check(TINY, "L 1 .\n. . .")  # (0,2), (1,1), (1,2) unlit
    assert not light_up.check(TINY, "L 1 .\nL . L")  # lamps see each other (row 1, column 0)
    assert not light_up.check(TINY, "L 1 L\n. L .")  # all lit, none sees another, but the 1 touches three
    assert not light_up.check(TINY, "L # .\n. . L")  # a black cell not copied as given
    assert not light_up.check(TINY, "L L .\n. . L")  # a lamp on the black cell


def test_an_unnumbered_black_cell_takes_any_number_of_lamps() -> None:
    case = {"rows": 2, "cols": 3, "grid": [".#.", "..."], "solution": []}
    assert light_up.check(case, "L # L\n. L .") and light_up.check(case, "L # .\n. . L")


def test_one_removed_lamp_of_a_generated_case_breaks_it() -> None:
    case = light_up.generate(random.Random(11))
    grid = [list(row) for row in case["solution"]]
    r, c = next((r, c) for r in range(case["rows"]) for c in range(case["cols"]) if grid[r][c] == "L")
    grid[r][c] = "."
    assert light_up.check(case, light_up.answer(case))
    assert not light_up.check(case, "\n".join(" ".join(row) for row in grid))
