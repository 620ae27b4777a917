"""Suguru (Tectonic): a region of n cells holds 1..n once each, and equal digits never touch, not
even diagonally."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil._regions import (
    king_neighbours,
    label_grid,
    parse_grid,
    random_partition,
    region_cells,
    render,
)

NAME = "suguru"
TITLE = "Suguru (Tectonic)"
SIZE = 6
_NODES = 100  # a fill search that takes longer gives up; the next partition is tried


def _fill(rng: random.Random, regions: list[str]) -> list[list[int]] | None:
    """A random filling, searched cell by cell, always on the cell with the fewest digits left."""
    n = len(regions)
    members = region_cells(regions)
    grid = [[0] * n for _ in range(n)]
    budget = [_NODES]

    def options(r: int, c: int) -> list[int]:
        label = regions[r][c]
        used = {grid[a][b] for a, b in members[label]}
        near = {grid[a][b] for a, b in king_neighbours(r, c, n, n)}
        return [v for v in range(1, len(members[label]) + 1) if v not in used and v not in near]

    def place() -> bool:
        budget[0] -= 1
        if budget[0] < 0:
            return False
        best: tuple[int, int, list[int]] | None = None
        for r in range(n):
            for c in range(n):
                if grid[r][c] == 0:
                    opts = options(r, c)
                    if best is None or len(opts) < len(best[2]):
                        best = (r, c, opts)
                    if not opts:
                        return False
        if best is None:
            return True
        r, c, opts = best
        rng.shuffle(opts)
        for v in opts:
            grid[r][c] = v
            if place():
                return True
        grid[r][c] = 0
        return False

    return grid if place() else None


def _merge_small(rng: random.Random, owner: list[list[int]], limit: int = 5) -> None:
    """Merge each region of one or two cells into a neighbouring region while the union fits in `limit`."""
    n = len(owner)
    changed = True
    while changed:
        changed = False
        sizes: dict[int, int] = {}
        for row in owner:
            for i in row:
                sizes[i] = sizes.get(i, 0) + 1
        for i in sorted(sizes):
            if sizes[i] > 2:
                continue
            near = sorted(
                {
                    owner[a][b]
                    for r in range(n)
                    for c in range(n)
                    if owner[r][c] == i
                    for a, b in king_neighbours(r, c, n, n)
                    if (a == r or b == c) and owner[a][b] != i and sizes[owner[a][b]] + sizes[i] <= limit
                }
            )
            if near:
                j = rng.choice(near)
                for row in owner:
                    for c, k in enumerate(row):
                        if k == i:
                            row[c] = j
                changed = True
                break


def generate(rng: random.Random) -> dict:
    """A random partition into regions of up to 5 cells, filled by a randomised search; some digits shown."""
    while True:
        owner = random_partition(rng, SIZE, SIZE, 5, 4)
        _merge_small(rng, owner)
        regions = label_grid(owner)
        grid = _fill(rng, regions)
        if grid is not None:
            break
    shown = [[str(v) if rng.random() < 0.4 else "." for v in row] for row in grid]
    return {
        "size": SIZE,
        "regions": regions,
        "given": ["".join(row) for row in shown],
        "solution": ["".join(map(str, row)) for row in grid],
    }


def prompt(case: dict) -> str:
    n = case["size"]
    return (
        f"Solve this Suguru (Tectonic) puzzle. The {n}x{n} grid is divided into regions; each letter "
        "below names the region a cell belongs to:\n\n"
        f"{render(case['regions'])}\n\n"
        "Given digits ('.' is an empty cell):\n\n"
        f"{render(case['given'])}\n\n"
        "Rules: write a digit in every cell so that a region of k cells holds each of the digits 1 to k "
        "exactly once, no two cells that touch (orthogonally or diagonally) hold the same digit, and "
        "every given digit stays.\n\n"
        "Write the solved grid inside <answer></answer>: one line per row, one digit per cell (spaces "
        "between cells are allowed). Write exactly one grid and nothing else inside the tags."
    )


def answer(case: dict) -> str:
    return render(case["solution"])


def check(case: dict, text: str) -> bool:
    n = case["size"]
    grid = parse_grid(text, n, n, "123456789")
    if grid is None:
        return False
    for cells in region_cells(case["regions"]).values():
        if sorted(grid[r][c] for r, c in cells) != [str(v) for v in range(1, len(cells) + 1)]:
            return False
    for r in range(n):
        for c in range(n):
            if any(grid[a][b] == grid[r][c] for a, b in king_neighbours(r, c, n, n)):
                return False
            if case["given"][r][c] not in (".", grid[r][c]):
                return False
    return True
