"""Shakashaka: the planted triangles score; a white area that is no rectangle, a wrong count beside a
number, a black cell moved, or the white cells left empty where triangles are needed does not."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil import shakashaka

# 4x4: a diamond in the middle 2x2 (7 9 / 1 3), black around it; the black cell above it shows 2
DIAMOND = ["####", "#79#", "#13#", "####"]
CASE = {"size": 4, "black": ["####", "#..#", "#..#", "####"],
        "clues": [[-1, 1, 1, -1], [-1] * 4, [-1] * 4, [-1] * 4], "solution": DIAMOND}  # fmt: skip


def _text(rows: list[str]) -> str:
    return "\n".join(" ".join(row) for row in rows)


def test_white_areas_must_be_rectangles() -> None:
    assert shakashaka.rectangles(DIAMOND)  # a diamond
    assert shakashaka.rectangles(["####", "#..#", "#..#", "####"])  # an upright square
    assert shakashaka.rectangles(["....", "....", "....", "...."])  # the whole grid
    assert not shakashaka.rectangles(["7...", "....", "....", "...."])  # a rectangle with a corner cut off
    assert not shakashaka.rectangles(["##..", "#...", "....", "...."])  # an L-shaped area
    assert shakashaka.rectangles(["79##", "13##", "##79", "##13"])  # two diamonds meeting at a corner
    assert shakashaka.rectangles(["#79#", "7..9", "1..3", "#13#"])  # a bigger diamond, white cells inside
    assert not shakashaka.rectangles(["#79#", "7..9", "1.3#", "#3##"])  # a diamond with a bite out of it


def test_the_rules_each_broken_alone() -> None:
    assert shakashaka.check(CASE, _text(DIAMOND))
    assert not shakashaka.check(CASE, _text(["####", "#..#", "#..#", "####"]))  # a square, but the counts are off
    assert not shakashaka.check(CASE, _text(["####", "#7.#", "#..#", "####"]))  # one triangle: no rectangle
    assert not shakashaka.check(CASE, _text(["####", "#97#", "#31#", "####"]))  # triangles the wrong way round
    assert not shakashaka.check(CASE, _text(["###.", "#79#", "#13#", "####"]))  # a black cell made white
    assert not shakashaka.check({**CASE, "clues": [[-1, 2, 1, -1]] + [[-1] * 4] * 3}, _text(DIAMOND))  # count


def test_a_generated_case_and_one_changed_cell() -> None:
    case = shakashaka.generate(random.Random(5))
    assert shakashaka.check(case, shakashaka.answer(case))
    assert not shakashaka.check(case, _text(case["black"]))  # leaving every white cell empty does not solve it
    grid = [list(row) for row in case["solution"]]
    r, c = next((r, c) for r in range(case["size"]) for c in range(case["size"]) if grid[r][c] in "7913")
    grid[r][c] = "."
    assert not shakashaka.check(case, _text(["".join(row) for row in grid]))
