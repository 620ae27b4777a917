"""Creek: shade some cells so that every number on a grid point (a corner where up to four cells meet)
is how many of the cells touching that point are shaded, and the unshaded cells form one group
connected through shared sides.

Cases: a 6x6 grid with about a third of its cells shaded at random (each kept only if the unshaded cells
stay connected); three fifths of the 7x7 grid points show their number. A case that shading nothing or
everything would solve is drawn again. The answer is the grid, # shaded and . unshaded; the check reads
every shown number and the connection, so any valid shading scores.
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.bootcamp.envs.pencil._grid import RULES_TAIL, connected, parse_grid, render

NAME = "creek"
TITLE = "Creek"
SIZE = 6


def around(grid: list[str], r: int, c: int) -> int:
    """How many shaded cells touch the grid point at row r, column c of the points (0 to size)."""
    size = len(grid)
    return sum(grid[cr][cc] == "#" for cr in (r - 1, r) for cc in (c - 1, c) if 0 <= cr < size and 0 <= cc < size)


def generate(rng: random.Random) -> dict[str, Any]:
    n = SIZE
    cells = [(r, c) for r in range(n) for c in range(n)]
    while True:
        black: set[tuple[int, int]] = set()
        target = round(n * n * rng.uniform(0.3, 0.4))
        for p in rng.sample(cells, len(cells)):
            if len(black) >= target:
                break
            if connected(set(cells) - black - {p}):
                black.add(p)
        solution = ["".join("#" if (r, c) in black else "." for c in range(n)) for r in range(n)]
        points = [(r, c) for r in range(n + 1) for c in range(n + 1)]
        shown = set(rng.sample(points, round(len(points) * 0.6)))
        clues = [[around(solution, r, c) if (r, c) in shown else -1 for c in range(n + 1)] for r in range(n + 1)]
        case = {"size": n, "clues": clues, "solution": solution}
        if not any(check(case, render([fill * n] * n)) for fill in ".#"):
            return case


def prompt(case: dict[str, Any]) -> str:
    size = case["size"]
    shown = "\n".join(" ".join("." if v < 0 else str(v) for v in row) for row in case["clues"])
    return (
        f"Creek puzzle on a {size}x{size} grid of cells. The numbers stand on the grid points, the corners where "
        f"cells meet: {size + 1} rows of {size + 1} points, the outer ones on the grid's edge and corners; '.' is a "
        "point without a number.\n"
        "Shade some cells so that:\n"
        "1. every number is how many of the cells touching that point (up to four: fewer on the edge) are "
        "shaded;\n"
        "2. all the unshaded cells form one group connected through shared sides.\n\n"
        f"Numbers on the grid points, top row of points first:\n{shown}\n\n"
        f"Answer: the grid of cells, {size} lines of {size} cells, # for a shaded cell and . for an unshaded one. "
        f"{RULES_TAIL}"
    )


def answer(case: dict[str, Any]) -> str:
    return render(case["solution"])


def check(case: dict[str, Any], text: str) -> bool:
    size = case["size"]
    got = parse_grid(text, size, size, ".#")
    if got is None:
        return False
    if any(v >= 0 and around(got, r, c) != v for r, row in enumerate(case["clues"]) for c, v in enumerate(row)):
        return False
    return connected({(r, c) for r in range(size) for c in range(size) if got[r][c] == "."})
