"""Mosaic (Fill-a-Pix): shade cells so that each number counts the shaded cells in the 3x3 block
centred on it (itself included)."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil._regions import SHADE_FORMAT, Cell, king_neighbours, parse_grid, render, shaded

NAME = "mosaic"
TITLE = "Mosaic (Fill-a-Pix)"
SIZE = 7


def block_count(cells: set[Cell], r: int, c: int, n: int) -> int:
    """Shaded cells among (r, c) and its (up to) eight neighbours."""
    return ((r, c) in cells) + sum(nb in cells for nb in king_neighbours(r, c, n, n))


def generate(rng: random.Random) -> dict:
    """Plant a random shading (about half the cells), then show the count of about 55% of the cells."""
    n = SIZE
    cells = {(r, c) for r in range(n) for c in range(n) if rng.random() < 0.5}
    clues = [[str(block_count(cells, r, c, n)) if rng.random() < 0.55 else "." for c in range(n)] for r in range(n)]
    return {
        "size": n,
        "clues": ["".join(row) for row in clues],
        "solution": ["".join("#" if (r, c) in cells else "." for c in range(n)) for r in range(n)],
    }


def prompt(case: dict) -> str:
    n = case["size"]
    return (
        f"Solve this Mosaic (Fill-a-Pix) puzzle on a {n}x{n} grid. A digit is a clue; '.' has none:\n\n"
        f"{render(case['clues'])}\n\n"
        "Rules: shade some cells so that every clue equals the number of shaded cells in the 3x3 block "
        "centred on it: the clue's own cell and its (up to) eight neighbours, diagonal ones included "
        "(cells outside the grid do not count). A clue cell may itself be shaded or not.\n\n" + SHADE_FORMAT
    )


def answer(case: dict) -> str:
    return render(case["solution"])


def check(case: dict, text: str) -> bool:
    n = case["size"]
    grid = parse_grid(text, n, n, "#.")
    if grid is None:
        return False
    cells = shaded(grid)
    return all(
        clue == "." or block_count(cells, r, c, n) == int(clue)
        for r, row in enumerate(case["clues"])
        for c, clue in enumerate(row)
    )
