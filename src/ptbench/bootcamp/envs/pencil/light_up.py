"""Light Up (Akari): place lamps on the white cells so that every white cell is lit, no lamp lights
another, and each numbered black cell touches exactly that many lamps.

Cases: a 6x6 to 7x7 grid, about a fifth of its cells black; lamps are planted greedily (an unlit white
cell, drawn at random, gets a lamp until every white cell is lit, so no two see each other), then most
black cells get the number of lamps beside them. The answer is the whole grid, black cells copied, every
lamp an `L`; the check walks the rules, so any valid lamp placement scores (not only the planted one).
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.bootcamp.envs.pencil._grid import RULES_TAIL, Grid, neighbours, parse_grid, render

NAME = "light_up"
TITLE = "Light Up (Akari)"
BLACK = "#01234"
_DIRS = ((-1, 0), (1, 0), (0, -1), (0, 1))


def _lamps_ok(grid: list[list[str]], lamps: set[tuple[int, int]]) -> bool:
    """No lamp sees another and every white cell is lit (grid: puzzle cells, '.' white)."""
    rows, cols = len(grid), len(grid[0])
    lit = set(lamps)
    for r, c in lamps:
        for dr, dc in _DIRS:
            nr, nc = r + dr, c + dc
            while 0 <= nr < rows and 0 <= nc < cols and grid[nr][nc] == ".":
                if (nr, nc) in lamps:
                    return False
                lit.add((nr, nc))
                nr, nc = nr + dr, nc + dc
    return all((r, c) in lit for r in range(rows) for c in range(cols) if grid[r][c] == ".")


def generate(rng: random.Random) -> dict[str, Any]:
    rows, cols = rng.choice((6, 7)), rng.choice((6, 7))
    cells = [["#" if rng.random() < 0.2 else "." for _ in range(cols)] for _ in range(rows)]
    lamps: set[tuple[int, int]] = set()
    unlit = [(r, c) for r in range(rows) for c in range(cols) if cells[r][c] == "."]
    while unlit:
        r, c = rng.choice(unlit)
        lamps.add((r, c))
        seen = {(r, c)}
        for dr, dc in _DIRS:
            nr, nc = r + dr, c + dc
            while 0 <= nr < rows and 0 <= nc < cols and cells[nr][nc] == ".":
                seen.add((nr, nc))
                nr, nc = nr + dr, nc + dc
        unlit = [p for p in unlit if p not in seen]
    for r in range(rows):
        for c in range(cols):
            if cells[r][c] == "#" and rng.random() < 0.75:
                cells[r][c] = str(sum((n in lamps) for n in neighbours(r, c, rows, cols)))
    puzzle = ["".join(row) for row in cells]
    solution = ["".join("L" if (r, c) in lamps else puzzle[r][c] for c in range(cols)) for r in range(rows)]
    return {"rows": rows, "cols": cols, "grid": puzzle, "solution": solution}


def prompt(case: dict[str, Any]) -> str:
    rows, cols = case["rows"], case["cols"]
    return (
        f"Light Up (Akari) puzzle, {rows} rows by {cols} columns. '.' is a white cell, '#' a black cell, and "
        "a digit 0-4 a black cell with a number.\n"
        "Place lamps on white cells so that:\n"
        "1. every white cell is lit: a lamp lights its own cell and every white cell in its row and column, "
        "in each direction up to the first black cell or the edge of the grid;\n"
        "2. no lamp is lit by another lamp (two lamps never see each other along a row or column);\n"
        "3. a numbered black cell has exactly that many lamps among the (up to four) cells directly above, "
        "below, left and right of it. An unnumbered black cell may touch any number of lamps.\n\n"
        f"Puzzle:\n{render(case['grid'])}\n\n"
        f"Answer: the whole grid, {rows} lines of {cols} cells: every lamp as L, every other white cell as '.', "
        f"every black cell copied unchanged. {RULES_TAIL}"
    )


def answer(case: dict[str, Any]) -> str:
    return render(case["solution"])


def check(case: dict[str, Any], text: str) -> bool:
    rows, cols, puzzle = case["rows"], case["cols"], case["grid"]
    got: Grid | None = parse_grid(text, rows, cols, ".L" + BLACK)
    if got is None:
        return False
    lamps = set()
    for r in range(rows):
        for c in range(cols):
            p, a = puzzle[r][c], got[r][c]
            if p == ".":
                if a == "L":
                    lamps.add((r, c))
                elif a != ".":
                    return False
            elif a != p:  # a black cell, numbered or not, is copied unchanged
                return False
    grid = [list(row) for row in puzzle]
    if not _lamps_ok(grid, lamps):
        return False
    return all(
        sum((n in lamps) for n in neighbours(r, c, rows, cols)) == int(puzzle[r][c])
        for r in range(rows)
        for c in range(cols)
        if puzzle[r][c].isdigit()
    )
