"""Palisade: divide the grid into regions of exactly the given size (connected through shared sides) so
that each numbered cell has exactly that many of its four sides on a region border (the edge of the
grid counts as a border).

Cases: a 6x6 grid cut into regions of 4 or 6 cells (a 5x5 grid cut into fives repeated its layouts too
often), grown at random: each region starts at a random free cell among those with the fewest free
neighbours and grows through random free neighbours (a dead end starts again); three fifths of the cells
show their border count. The answer names each cell's region with a letter; a region is a group of
cells with one letter connected through shared sides, and the check reads the regions' sizes and every
shown count, so any valid division scores.
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.bootcamp.envs.pencil._grid import LABELS, RULES_TAIL, neighbours, parse_grid, render

NAME = "palisade"
TITLE = "Palisade"


def regions(grid: list[str]) -> list[list[int]]:
    """Each cell's region number: groups of equal letters connected through shared sides."""
    rows, cols = len(grid), len(grid[0])
    ids = [[-1] * cols for _ in range(rows)]
    count = 0
    for r in range(rows):
        for c in range(cols):
            if ids[r][c] >= 0:
                continue
            ids[r][c], stack = count, [(r, c)]
            while stack:
                p = stack.pop()
                for nr, nc in neighbours(p[0], p[1], rows, cols):
                    if ids[nr][nc] < 0 and grid[nr][nc] == grid[r][c]:
                        ids[nr][nc] = count
                        stack.append((nr, nc))
            count += 1
    return ids


def borders(ids: list[list[int]], r: int, c: int) -> int:
    """How many of (r, c)'s four sides lie on a region border or the grid's edge."""
    rows, cols = len(ids), len(ids[0])
    inside = sum(ids[nr][nc] == ids[r][c] for nr, nc in neighbours(r, c, rows, cols))
    return 4 - inside


def _divide(rng: random.Random, size: int, k: int) -> list[str] | None:
    label = [[""] * size for _ in range(size)]
    for n in range(size * size // k):
        free = [(r, c) for r in range(size) for c in range(size) if not label[r][c]]
        room = {p: sum(not label[q[0]][q[1]] for q in neighbours(p[0], p[1], size, size)) for p in free}
        start = rng.choice([p for p in free if room[p] == min(room.values())])
        region = [start]
        label[start[0]][start[1]] = LABELS[n]
        while len(region) < k:
            frontier = sorted({q for p in region for q in neighbours(p[0], p[1], size, size) if not label[q[0]][q[1]]})
            if not frontier:
                return None
            r, c = rng.choice(frontier)
            label[r][c] = LABELS[n]
            region.append((r, c))
    return ["".join(row) for row in label]


def generate(rng: random.Random) -> dict[str, Any]:
    size, k = rng.choice(((6, 4), (6, 6)))
    solution = None
    while solution is None:
        solution = _divide(rng, size, k)
    ids = regions(solution)
    cells = [(r, c) for r in range(size) for c in range(size)]
    shown = set(rng.sample(cells, round(len(cells) * 0.6)))
    clues = [[borders(ids, r, c) if (r, c) in shown else -1 for c in range(size)] for r in range(size)]
    return {"size": size, "region_size": k, "clues": clues, "solution": solution}


def prompt(case: dict[str, Any]) -> str:
    size, k = case["size"], case["region_size"]
    shown = render(["".join("." if v < 0 else str(v) for v in row) for row in case["clues"]])
    return (
        f"Palisade puzzle on a {size}x{size} grid. Some cells hold a number; '.' is a cell without one.\n"
        f"Divide the grid into {size * size // k} regions so that:\n"
        f"1. every region is a group of exactly {k} cells connected through shared sides;\n"
        "2. every numbered cell has exactly that many of its four sides on a border between regions, the edge "
        "of the grid counting as a border.\n\n"
        f"Puzzle:\n{shown}\n\n"
        f"Answer: the grid, {size} lines of {size} letters, each cell as the letter of its region, every region "
        f"with its own letter (A-Z; cells side by side with the same letter are one region). {RULES_TAIL}"
    )


def answer(case: dict[str, Any]) -> str:
    return render(case["solution"])


def check(case: dict[str, Any], text: str) -> bool:
    size, k = case["size"], case["region_size"]
    got = parse_grid(text, size, size, LABELS[:26])
    if got is None:
        return False
    ids = regions(got)
    sizes: dict[int, int] = {}
    for row in ids:
        for i in row:
            sizes[i] = sizes.get(i, 0) + 1
    if any(n != k for n in sizes.values()):
        return False
    return all(v < 0 or borders(ids, r, c) == v for r, row in enumerate(case["clues"]) for c, v in enumerate(row))
