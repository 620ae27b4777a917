"""Yin-Yang: the planted colouring scores; a colour split in two, a 2x2 block of one colour, one colour
missing or a shown cell overwritten does not."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil import yin_yang

# 3x3: black the top row and the middle column's first two cells, white the rest
OPEN = {"size": 3, "given": ["...", "...", "..."], "solution": ["BBB", "WBW", "WWW"]}


def test_the_rules_each_broken_alone() -> None:
    assert yin_yang.check(OPEN, "B B B\nW B W\nW W W")
    assert not yin_yang.check(OPEN, "B W B\nB W B\nB W B")  # black split in two
    assert not yin_yang.check(OPEN, "B B B\nB B W\nW W W")  # a 2x2 block all black
    assert not yin_yang.check(OPEN, "B B B\nB W W\nB W W")  # a 2x2 block all white
    assert not yin_yang.check(OPEN, "B B B\nB B B\nB B B")  # white missing (and 2x2 blocks)
    shown = {**OPEN, "given": ["W..", "...", "..."]}
    assert not yin_yang.check(shown, "B B B\nW B W\nW W W")  # the shown white cell painted black
    assert yin_yang.check(shown, "W W W\nB W B\nB B B")  # another valid colouring scores


def test_a_generated_case_keeps_every_rule_and_one_flip_breaks_a_case() -> None:
    case = yin_yang.generate(random.Random(5))
    assert yin_yang.check(case, yin_yang.answer(case))
    shown = [(r, c) for r in range(case["size"]) for c in range(case["size"]) if case["given"][r][c] != "."]
    assert len(shown) == round(case["size"] ** 2 * 0.55)
    grid = [list(row) for row in case["solution"]]
    r, c = shown[0]
    grid[r][c] = "W" if grid[r][c] == "B" else "B"
    assert not yin_yang.check(case, "\n".join(" ".join(row) for row in grid))
