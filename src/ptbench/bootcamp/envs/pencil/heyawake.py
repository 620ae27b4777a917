"""Heyawake: shade cells in a grid of rectangular rooms; numbered rooms hold that many shaded cells,
shaded cells never touch, unshaded cells stay connected, and no straight unshaded run crosses two
room borders."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil._regions import (
    LABELS,
    SHADE_FORMAT,
    Cell,
    connected,
    neighbours,
    parse_grid,
    region_cells,
    render,
    shaded,
)

NAME = "heyawake"
TITLE = "Heyawake"
SIZE = 7


def _rooms(rng: random.Random, size: int) -> list[list[int]]:
    """Split the grid into rectangles, each side at least 2 cells, of at most 4 to 9 cells."""
    owner = [[0] * size for _ in range(size)]
    todo = [(0, 0, size, size)]
    count = 0
    while todo:
        r, c, h, w = todo.pop()
        if h * w <= rng.randint(4, 9) or max(h, w) < 4:
            for dr in range(h):
                for dc in range(w):
                    owner[r + dr][c + dc] = count
            count += 1
            continue
        if w < 4 or (h >= 4 and rng.random() < 0.5):
            k = rng.randint(2, h - 2)
            todo += [(r, c, k, w), (r + k, c, h - k, w)]
        else:
            k = rng.randint(2, w - 2)
            todo += [(r, c, h, k), (r, c + k, h, w - k)]
    return owner


def _bad_runs(grid: list[list[str]], regions: list[str]) -> list[list[Cell]]:
    """The maximal straight runs of unshaded cells that hold cells of three or more rooms."""
    n = len(grid)
    lines = [[(r, c) for c in range(n)] for r in range(n)] + [[(r, c) for r in range(n)] for c in range(n)]
    bad = []
    for line in lines:
        run: list[Cell] = []
        for cell in [*line, None]:
            if cell is None or grid[cell[0]][cell[1]] == "#":
                if len({regions[r][c] for r, c in run}) > 2:
                    bad.append(run)
                run = []
            else:
                run.append(cell)
    return bad


def _runs_ok(grid: list[list[str]], regions: list[str]) -> bool:
    return not _bad_runs(grid, regions)


def _can_shade(grid: list[list[str]], r: int, c: int) -> bool:
    n = len(grid)
    if grid[r][c] == "#" or any(grid[a][b] == "#" for a, b in neighbours(r, c, n, n)):
        return False
    white = {(a, b) for a in range(n) for b in range(n) if grid[a][b] == "." and (a, b) != (r, c)}
    return connected(white)


def _valid_shading(grid: list[list[str]], regions: list[str]) -> bool:
    n = len(grid)
    cells = shaded(grid)
    if any(nb in cells for r, c in cells for nb in neighbours(r, c, n, n)):
        return False
    white = {(r, c) for r in range(n) for c in range(n)} - cells
    return connected(white) and _runs_ok(grid, regions)


def generate(rng: random.Random) -> dict:
    """Rooms first, then shading: cells of runs that cross two room borders until none does (a new
    layout where that gets stuck), then more cells at random; every room's count is read off it (with
    some rooms unnumbered, other cases' solutions passed far more often)."""
    n = SIZE
    while True:
        owner = _rooms(rng, n)
        regions = ["".join(LABELS[i] for i in row) for row in owner]
        grid = [["."] * n for _ in range(n)]
        while True:  # shade cells on runs that break rule 4 until none is left (or none can be shaded)
            bad = _bad_runs(grid, regions)
            options = sorted(
                {
                    (r, c)
                    for run in bad
                    for r, c in run
                    if regions[r][c] not in (regions[run[0][0]][run[0][1]], regions[run[-1][0]][run[-1][1]])
                    and _can_shade(grid, r, c)
                }
            )
            if not options:
                break
            r, c = rng.choice(options)
            grid[r][c] = "#"
        if bad:
            continue
        order = [(r, c) for r in range(n) for c in range(n)]
        rng.shuffle(order)
        for r, c in order:  # then more shading at random: a shorter run never breaks rule 4
            if rng.random() < 0.35 and _can_shade(grid, r, c):
                grid[r][c] = "#"
        break
    cells = shaded(grid)
    clues = {label: len(room & cells) for label, room in sorted(region_cells(regions).items())}
    return {
        "size": n,
        "regions": regions,
        "clues": clues,
        "solution": ["".join(row) for row in grid],
    }


def prompt(case: dict) -> str:
    n = case["size"]
    counts = "\n".join(f"room {label}: {k} shaded cell{'s' if k != 1 else ''}" for label, k in case["clues"].items())
    return (
        f"Solve this Heyawake puzzle. The {n}x{n} grid is divided into rectangular rooms; each "
        "letter below names the room a cell belongs to.\n\n"
        f"{render(case['regions'])}\n\n"
        f"Shaded cells per room:\n{counts}\n\n"
        "Rules: shade some cells so that (1) each room contains exactly the listed number of "
        "shaded cells; (2) no two shaded cells share an edge; (3) all unshaded cells form one "
        "orthogonally connected group; (4) no horizontal or vertical line of consecutive unshaded "
        "cells passes through more than two rooms (it may cross at most one room border).\n\n" + SHADE_FORMAT
    )


def answer(case: dict) -> str:
    return render(case["solution"])


def check(case: dict, text: str) -> bool:
    n = case["size"]
    grid = parse_grid(text, n, n, "#.")
    if grid is None or not _valid_shading(grid, case["regions"]):
        return False
    cells: set[Cell] = shaded(grid)
    rooms = region_cells(case["regions"])
    return all(len(rooms[label] & cells) == k for label, k in case["clues"].items())
