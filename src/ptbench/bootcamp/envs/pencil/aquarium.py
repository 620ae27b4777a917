"""Aquarium: fill the tanks with water so that every row and column holds as many water cells as its
clue says; water in a tank lies level: it fills every cell of the tank at and below its surface row.

Cases: a 6x6 grid cut into random connected tanks of 1 to 6 cells, each filled to a random level
(empty to full); the clues are the planted water's row and column counts. The answer is the grid, `~`
water and `.` air; the check reads each tank (its water is exactly its cells from some row down) and
the counts, so any valid filling scores.
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.bootcamp.envs.pencil._grid import LABELS, RULES_TAIL, counts, neighbours, parse_grid, render

NAME = "aquarium"
TITLE = "Aquarium"
SIZE = 6


def _tanks(rng: random.Random, size: int) -> list[list[int]]:
    owner = [[-1] * size for _ in range(size)]
    count = 0
    for r in range(size):
        for c in range(size):
            if owner[r][c] != -1:
                continue
            target, cells = rng.randint(2, 6), [(r, c)]
            owner[r][c] = count
            while len(cells) < target:
                free = sorted({n for cell in cells for n in neighbours(*cell, size, size) if owner[n[0]][n[1]] == -1})
                if not free:
                    break
                nr, nc = rng.choice(free)
                owner[nr][nc] = count
                cells.append((nr, nc))
            count += 1
    return owner


def generate(rng: random.Random) -> dict[str, Any]:
    size = SIZE
    owner = _tanks(rng, size)
    levels = {}
    for tank in range(max(max(row) for row in owner) + 1):
        tank_rows = [r for r in range(size) for c in range(size) if owner[r][c] == tank]
        levels[tank] = rng.randint(min(tank_rows), max(tank_rows) + 1)  # the surface row; below the tank: empty
    solution = ["".join("~" if r >= levels[owner[r][c]] else "." for c in range(size)) for r in range(size)]
    row_counts, col_counts = counts(solution, "~")
    layout = ["".join(LABELS[t] for t in row) for row in owner]
    return {"size": size, "tanks": layout, "rows": row_counts, "cols": col_counts, "solution": solution}


def prompt(case: dict[str, Any]) -> str:
    size = case["size"]
    return (
        f"Aquarium puzzle on a {size}x{size} grid. The grid is divided into tanks; below, each cell shows the letter "
        "of its tank (cells with the same letter are one tank).\n"
        "Fill some cells with water so that:\n"
        "1. water in a tank is level: if a cell of a tank holds water, every cell of that tank in the same row or "
        "in any row below it holds water too (a tank may be empty or full);\n"
        "2. each row and each column holds exactly the number of water cells its clue gives.\n\n"
        f"Tanks:\n{render(case['tanks'])}\n"
        f"Water cells per row, top to bottom: {' '.join(map(str, case['rows']))}\n"
        f"Water cells per column, left to right: {' '.join(map(str, case['cols']))}\n\n"
        f"Answer: the grid, {size} lines of {size} cells, ~ for water and . for an empty cell. {RULES_TAIL}"
    )


def answer(case: dict[str, Any]) -> str:
    return render(case["solution"])


def check(case: dict[str, Any], text: str) -> bool:
    size, tanks = case["size"], case["tanks"]
    got = parse_grid(text, size, size, ".~")
    if got is None:
        return False
    for label in sorted({ch for row in tanks for ch in row}):
        cells = [(r, c) for r in range(size) for c in range(size) if tanks[r][c] == label]
        wet = [r for r, c in cells if got[r][c] == "~"]
        surface = min(wet, default=size)
        if any((got[r][c] == "~") != (r >= surface) for r, c in cells):
            return False  # water that is not level, or air below water
    return counts(got, "~") == (case["rows"], case["cols"])
