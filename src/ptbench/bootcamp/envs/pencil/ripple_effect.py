"""Ripple Effect: fill every region of n cells with the numbers 1 to n, once each, so that two equal
numbers v in one row or one column have at least v cells between them.

Cases: a 6x6 grid cut into random connected regions of 1 to 5 cells, filled by a randomised backtracking
search in reading order (a layout it cannot fill quickly is cut again); about a third of the cells show
their number. The answer is the grid of numbers; the check reads the regions, the spacing rule and the
shown numbers, so any valid filling scores.
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.bootcamp.envs.pencil._grid import RULES_TAIL, parse_grid, render
from ptbench.bootcamp.envs.pencil._shapes4 import layout, partition, regions_of

NAME = "ripple_effect"
TITLE = "Ripple Effect"
SIZE = 6


def _fits(grid: list[list[int]], r: int, c: int, v: int) -> bool:
    size = len(grid)
    for d in range(1, v + 1):
        for nr, nc in ((r - d, c), (r + d, c), (r, c - d), (r, c + d)):
            if 0 <= nr < size and 0 <= nc < size and grid[nr][nc] == v:
                return False
    return True


def _fill(rng: random.Random, regions: list[str]) -> list[list[int]] | None:
    size = len(regions)
    members = regions_of(regions)
    grid = [[0] * size for _ in range(size)]
    cells = [(r, c) for r in range(size) for c in range(size)]
    budget = [5000]

    def place(k: int) -> bool:
        if k == len(cells):
            return True
        budget[0] -= 1
        if budget[0] < 0:
            return False
        r, c = cells[k]
        label = regions[r][c]
        used = {grid[a][b] for a, b in members[label]}
        options = [v for v in range(1, len(members[label]) + 1) if v not in used and _fits(grid, r, c, v)]
        rng.shuffle(options)
        for v in options:
            grid[r][c] = v
            if place(k + 1):
                return True
        grid[r][c] = 0
        return False

    return grid if place(0) else None


def generate(rng: random.Random) -> dict[str, Any]:
    size = SIZE
    filled = None
    while filled is None:
        regions = layout(partition(rng, size, size, 1, 5))
        filled = _fill(rng, regions)
    solution = ["".join(map(str, row)) for row in filled]
    shown = set(rng.sample([(r, c) for r in range(size) for c in range(size)], size * size // 3))
    clues = ["".join(solution[r][c] if (r, c) in shown else "." for c in range(size)) for r in range(size)]
    return {"size": size, "regions": regions, "clues": clues, "solution": solution}


def prompt(case: dict[str, Any]) -> str:
    size = case["size"]
    return (
        f"Ripple Effect puzzle on a {size}x{size} grid, divided into regions; the first grid shows each cell's "
        "region letter (cells with the same letter are one region), the second the numbers given ('.' is an "
        "empty cell).\nWrite a number in every cell so that:\n"
        "1. a region of n cells holds each of the numbers 1 to n exactly once;\n"
        "2. two equal numbers v in the same row or the same column have at least v cells between them (two 1s "
        "may not be neighbours, two 2s need two cells between them, and so on);\n"
        "3. the given numbers stay as given.\n\n"
        f"Regions:\n{render(case['regions'])}\n\nGiven numbers:\n{render(case['clues'])}\n\n"
        f"Answer: the grid, {size} lines of {size} cells, each cell its number. {RULES_TAIL}"
    )


def answer(case: dict[str, Any]) -> str:
    return render(case["solution"])


def check(case: dict[str, Any], text: str) -> bool:
    size, clues = case["size"], case["clues"]
    parsed = parse_grid(text, size, size, "123456789")
    if parsed is None:
        return False
    got = [[int(ch) for ch in row] for row in parsed]
    if any(clues[r][c] != "." and int(clues[r][c]) != got[r][c] for r in range(size) for c in range(size)):
        return False
    for cells in regions_of(case["regions"]).values():
        if sorted(got[r][c] for r, c in cells) != list(range(1, len(cells) + 1)):
            return False
    grid = [list(row) for row in got]
    for r in range(size):
        for c in range(size):
            v, grid[r][c] = grid[r][c], 0
            if not _fits(grid, r, c, v):
                return False
            grid[r][c] = v
    return True
