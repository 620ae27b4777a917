"""Battleships (solitaire, Bimaru): place the whole fleet in the grid, ships straight and touching no
other ship even at a corner, so that every row and column holds as many ship cells as its clue says.

Cases: a 6x6 grid with the fleet 3, 2, 2, 1, 1, 1 or a 7x7 with 4, 3, 2, 2, 1, 1, 1, placed at random
(no two ships touching), the clues its row and column counts, and 2 or 3 cells shown (ship or water).
The answer is the grid, `#` ship and `.` water; the check reads the ships off it (straight, apart, the
fleet exactly), the shown cells and the counts, so any valid placement scores.
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.bootcamp.envs.pencil._grid import RULES_TAIL, counts, diagonal_neighbours, parse_grid, render

NAME = "battleships"
TITLE = "Battleships (solitaire)"
FLEETS = {6: [3, 2, 2, 1, 1, 1], 7: [4, 3, 2, 2, 1, 1, 1]}


def _place(rng: random.Random, size: int, fleet: list[int]) -> list[str] | None:
    grid = [["."] * size for _ in range(size)]
    for length in fleet:
        spots = []
        for r in range(size):
            for c in range(size):
                for dr, dc in ((0, 1), (1, 0)) if length > 1 else ((0, 1),):
                    cells = [(r + k * dr, c + k * dc) for k in range(length)]
                    if all(0 <= a < size and 0 <= b < size for a, b in cells) and not any(
                        grid[n[0]][n[1]] == "#"
                        for a, b in cells
                        for n in [(a, b), *diagonal_neighbours(a, b, size, size)]
                    ):
                        spots.append(cells)
        if not spots:
            return None
        for a, b in rng.choice(spots):
            grid[a][b] = "#"
    return ["".join(row) for row in grid]


def generate(rng: random.Random) -> dict[str, Any]:
    size = rng.choice((6, 7))
    solution = None
    while solution is None:
        solution = _place(rng, size, FLEETS[size])
    row_counts, col_counts = counts(solution, "#")
    shown = [["?"] * size for _ in range(size)]
    for _ in range(rng.randint(2, 3)):
        r, c = rng.randrange(size), rng.randrange(size)
        shown[r][c] = "#" if solution[r][c] == "#" else "w"
    return {"size": size, "fleet": FLEETS[size], "shown": ["".join(row) for row in shown], "rows": row_counts,
            "cols": col_counts, "solution": solution}  # fmt: skip


def prompt(case: dict[str, Any]) -> str:
    size = case["size"]
    fleet = ", ".join(str(n) for n in case["fleet"])
    return (
        f"Battleships (solitaire) puzzle on a {size}x{size} grid. Hide this fleet in the grid: ships of length "
        f"{fleet} (one ship per number; a ship of length n covers n cells in one straight line, horizontal or "
        "vertical).\nRules:\n"
        "1. every ship of the fleet is placed, and no other ship cells: every group of orthogonally touching ship "
        "cells is one straight ship of the fleet;\n"
        "2. ships never touch each other, not even diagonally at a corner;\n"
        "3. each row and each column holds exactly the number of ship cells its clue gives;\n"
        "4. the cells shown below are as shown: # is a ship cell, w is water, ? is unknown.\n\n"
        f"Grid:\n{render(case['shown'])}\n"
        f"Ship cells per row, top to bottom: {' '.join(map(str, case['rows']))}\n"
        f"Ship cells per column, left to right: {' '.join(map(str, case['cols']))}\n\n"
        f"Answer: the grid, {size} lines of {size} cells, # for a ship cell and . for water. {RULES_TAIL}"
    )


def answer(case: dict[str, Any]) -> str:
    return render(case["solution"])


def _ships(grid: list[str]) -> list[int] | None:
    """The lengths of the ships on the grid; None if a group of ship cells is not one straight line."""
    size, seen, lengths = len(grid), set(), []
    for r in range(size):
        for c in range(size):
            if grid[r][c] != "#" or (r, c) in seen:
                continue
            group, stack = {(r, c)}, [(r, c)]
            while stack:
                a, b = stack.pop()
                for n in ((a - 1, b), (a + 1, b), (a, b - 1), (a, b + 1)):
                    if 0 <= n[0] < size and 0 <= n[1] < size and grid[n[0]][n[1]] == "#" and n not in group:
                        group.add(n)
                        stack.append(n)
            seen |= group
            if len({a for a, _ in group}) > 1 and len({b for _, b in group}) > 1:
                return None  # bent
            lengths.append(len(group))
    return lengths


def check(case: dict[str, Any], text: str) -> bool:
    size = case["size"]
    got = parse_grid(text, size, size, ".#")
    if got is None:
        return False
    for r in range(size):
        for c in range(size):
            shown = case["shown"][r][c]
            if (shown == "#" and got[r][c] != "#") or (shown == "w" and got[r][c] != "."):
                return False
            if got[r][c] == "#" and any(
                got[a][b] == "#" for a, b in diagonal_neighbours(r, c, size, size) if a != r and b != c
            ):
                return False  # ships touching at a corner
    ships = _ships(got)
    if ships is None or sorted(ships) != sorted(case["fleet"]):
        return False
    return counts(got, "#") == (case["rows"], case["cols"])
