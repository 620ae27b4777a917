"""Slant (Gokigen Naname): draw one diagonal in every cell so that the diagonals never form a closed
loop and each numbered grid point touches exactly that many diagonals.

Cases: a 5x5 or 6x6 grid filled cell by cell in random order with a random diagonal (the other one where
the first would close a loop; a fresh start in the rare case both would); about three fifths of the
grid points show how many diagonals touch them. The answer is the grid of `/` and `\\`; the check counts
the diagonals at each numbered point and looks for a loop (union-find), so any valid filling scores.
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.bootcamp.envs.pencil._grid import RULES_TAIL, parse_grid, render

NAME = "slant"
TITLE = "Slant (Gokigen Naname)"


def _ends(r: int, c: int, slash: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """The two grid points a cell's diagonal joins (grid point (i, j): row line i, column line j)."""
    return ((r, c), (r + 1, c + 1)) if slash == "\\" else ((r, c + 1), (r + 1, c))


class _Points:
    def __init__(self) -> None:
        self.parent: dict[tuple[int, int], tuple[int, int]] = {}

    def find(self, p: tuple[int, int]) -> tuple[int, int]:
        while self.parent.get(p, p) != p:
            p = self.parent[p]
        return p

    def join(self, a: tuple[int, int], b: tuple[int, int]) -> bool:
        """Join a and b; False if they were joined already (the new diagonal closes a loop)."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        self.parent[ra] = rb
        return True


def _fill(rng: random.Random, size: int) -> list[str] | None:
    grid = [[""] * size for _ in range(size)]
    points = _Points()
    order = [(r, c) for r in range(size) for c in range(size)]
    rng.shuffle(order)
    for r, c in order:
        first = rng.choice("/\\")
        for slash in (first, "/" if first == "\\" else "\\"):
            if points.join(*_ends(r, c, slash)):
                grid[r][c] = slash
                break
        else:
            return None
    return ["".join(row) for row in grid]


def degrees(grid: list[str]) -> list[list[int]]:
    """How many diagonals touch each grid point."""
    size = len(grid)
    out = [[0] * (size + 1) for _ in range(size + 1)]
    for r in range(size):
        for c in range(size):
            for i, j in _ends(r, c, grid[r][c]):
                out[i][j] += 1
    return out


def generate(rng: random.Random) -> dict[str, Any]:
    size = rng.choice((5, 6))
    solution = None
    while solution is None:
        solution = _fill(rng, size)
    full = degrees(solution)
    clues = [[full[i][j] if rng.random() < 0.6 else -1 for j in range(size + 1)] for i in range(size + 1)]
    return {"size": size, "clues": clues, "solution": solution}


def prompt(case: dict[str, Any]) -> str:
    size = case["size"]
    points = "\n".join(" ".join(str(v) if v >= 0 else "." for v in row) for row in case["clues"])
    return (
        f"Slant (Gokigen Naname) puzzle: a {size}x{size} grid of cells, and its {size + 1}x{size + 1} grid points "
        "(the cell corners). Draw one diagonal in every cell, either / (joining the cell's bottom-left and "
        "top-right corners) or \\ (joining its top-left and bottom-right corners), so that:\n"
        "1. the diagonals never form a closed loop;\n"
        "2. every numbered grid point is touched by exactly that many diagonals.\n\n"
        f"Grid points, {size + 1} rows of {size + 1} (top to bottom, left to right; . is a point without a number; "
        f"the cell in row r and column c has the points of rows r, r+1 and columns c, c+1 as its corners):\n"
        f"{points}\n\n"
        f"Answer: the cells, {size} lines of {size} cells, each / or \\. {RULES_TAIL}"
    )


def answer(case: dict[str, Any]) -> str:
    return render(case["solution"])


def check(case: dict[str, Any], text: str) -> bool:
    size, clues = case["size"], case["clues"]
    got = parse_grid(text, size, size, "/\\")
    if got is None:
        return False
    full = degrees(got)
    if any(clues[i][j] >= 0 and clues[i][j] != full[i][j] for i in range(size + 1) for j in range(size + 1)):
        return False
    points = _Points()
    return all(points.join(*_ends(r, c, got[r][c])) for r in range(size) for c in range(size))
