"""Yin-Yang: colour every cell black or white so that the black cells form one group connected through
shared sides, so do the white cells, and no 2x2 block is all one colour; some cells' colours are shown.

Cases: a 7x7 grid; black grows from a random cell, one random frontier cell at a time (kept only if the
white cells stay connected and no 2x2 block turns all black) until no 2x2 block is all white and then a
few cells more; the grid is turned, mirrored and its colours swapped at random, then 200 random
single-cell flips are tried, each kept only if every rule still holds. 55% of the cells are shown (both
colours among them: fewer let 0.2% of other cases' solutions solve a case, 6x6 grids more). The answer
is the grid of B and W; the check reads the three rules and the shown cells, so any valid colouring
scores.
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.bootcamp.envs.pencil._grid import RULES_TAIL, connected, parse_grid, render

NAME = "yin_yang"
TITLE = "Yin-Yang"
SIZE = 7


def _cells(grid: list[list[str]] | list[str], colour: str) -> set[tuple[int, int]]:
    return {(r, c) for r, row in enumerate(grid) for c, v in enumerate(row) if v == colour}


def one_colour_block(grid: list[list[str]] | list[str]) -> bool:
    """Whether some 2x2 block of the grid is all one colour."""
    return any(
        grid[r][c] == grid[r + 1][c] == grid[r][c + 1] == grid[r + 1][c + 1]
        for r in range(len(grid) - 1)
        for c in range(len(grid[0]) - 1)
    )


def _grow(rng: random.Random, n: int) -> list[list[str]] | None:
    """Black grown from a random cell, one random frontier cell at a time (kept only if the white cells
    stay connected and no 2x2 block turns all black), until no 2x2 block is all white; None at a dead end."""
    grid = [["W"] * n for _ in range(n)]
    grid[rng.randrange(n)][rng.randrange(n)] = "B"
    extra = rng.randrange(2 * n)  # more cells after the last all-white block is gone, so black reaches the edge
    while one_colour_block(grid) or extra > 0:
        extra -= not one_colour_block(grid)
        black = _cells(grid, "B")
        frontier = sorted({q for r, c in black for q in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1))
                           if 0 <= q[0] < n and 0 <= q[1] < n and q not in black})  # fmt: skip
        rng.shuffle(frontier)
        for r, c in frontier:
            grid[r][c] = "B"
            white = _cells(grid, "W")
            if white and connected(white) and not _all_black_block(grid):
                break
            grid[r][c] = "W"
        else:
            return None if one_colour_block(grid) else grid
    return grid


def _all_black_block(grid: list[list[str]]) -> bool:
    return any(
        grid[r][c] == grid[r + 1][c] == grid[r][c + 1] == grid[r + 1][c + 1] == "B"
        for r in range(len(grid) - 1)
        for c in range(len(grid[0]) - 1)
    )


def generate(rng: random.Random) -> dict[str, Any]:
    n = SIZE
    grid = None
    while grid is None:
        grid = _grow(rng, n)
    for _ in range(rng.randrange(4)):  # a random turn, mirror image and swap of colours
        grid = [list(row) for row in zip(*grid[::-1], strict=True)]
    if rng.random() < 0.5:
        grid = [row[::-1] for row in grid]
    if rng.random() < 0.5:
        grid = [["W" if v == "B" else "B" for v in row] for row in grid]
    for _ in range(200):  # random single-cell flips that keep every rule
        r, c = rng.randrange(n), rng.randrange(n)
        old = grid[r][c]
        grid[r][c] = "W" if old == "B" else "B"
        black, white = _cells(grid, "B"), _cells(grid, "W")
        if not black or not white or one_colour_block(grid) or not connected(black) or not connected(white):
            grid[r][c] = old
    solution = ["".join(row) for row in grid]
    cells = [(r, c) for r in range(n) for c in range(n)]
    while True:
        shown = set(rng.sample(cells, round(n * n * 0.55)))
        if {solution[r][c] for r, c in shown} == {"B", "W"}:
            break
    given = ["".join(solution[r][c] if (r, c) in shown else "." for c in range(n)) for r in range(n)]
    return {"size": n, "given": given, "solution": solution}


def prompt(case: dict[str, Any]) -> str:
    size = case["size"]
    return (
        f"Yin-Yang puzzle on a {size}x{size} grid. B is a black cell, W a white cell and '.' a cell to colour.\n"
        "Colour every cell black or white so that:\n"
        "1. all the black cells form one group connected through shared sides;\n"
        "2. all the white cells form one group connected through shared sides;\n"
        "3. no 2x2 block of cells is all one colour;\n"
        "4. the cells shown keep their colours.\n\n"
        f"Puzzle:\n{render(case['given'])}\n\n"
        f"Answer: the grid, {size} lines of {size} cells, each B or W. {RULES_TAIL}"
    )


def answer(case: dict[str, Any]) -> str:
    return render(case["solution"])


def check(case: dict[str, Any], text: str) -> bool:
    size = case["size"]
    got = parse_grid(text, size, size, "BW")
    if got is None:
        return False
    if any(
        s != "." and s != g
        for srow, grow in zip(case["given"], got, strict=True)
        for s, g in zip(srow, grow, strict=True)
    ):
        return False
    black, white = _cells(got, "B"), _cells(got, "W")
    return bool(black) and bool(white) and connected(black) and connected(white) and not one_colour_block(got)
