"""Private helpers of pencil2's families: strict grid parsing, rendering and regions (connectivity and
the region labels are `_grid`'s, re-exported here for those families)."""

from __future__ import annotations

import random
from collections.abc import Iterable

from ptbench.bootcamp.envs.pencil._grid import LABELS
from ptbench.bootcamp.envs.pencil._grid import connected as connected  # the families import both from here

Cell = tuple[int, int]

SHADE_FORMAT = (
    "Write the solved grid inside <answer></answer>: one line per row, one character per cell, "
    "`#` for a shaded cell and `.` for an unshaded cell (spaces between cells are allowed). "
    "Write exactly one grid and nothing else inside the tags."
)


def parse_grid(text: str, rows: int, cols: int, alphabet: str) -> list[list[str]] | None:
    """Exactly `rows` non-empty lines of `cols` characters from `alphabet` (spaces between cells
    allowed); anything else (prose, a second grid, a wrong size, another character) -> None."""
    lines = [line.replace(" ", "").replace("\t", "") for line in (text or "").strip().splitlines()]
    lines = [line for line in lines if line]
    if len(lines) != rows:
        return None
    grid = []
    for line in lines:
        if len(line) != cols or any(ch not in alphabet for ch in line):
            return None
        grid.append(list(line))
    return grid


def render(grid: Iterable[Iterable[object]]) -> str:
    return "\n".join(" ".join(str(v) for v in row) for row in grid)


def neighbours(r: int, c: int, rows: int, cols: int) -> list[Cell]:
    return [
        (r + dr, c + dc) for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)) if 0 <= r + dr < rows and 0 <= c + dc < cols
    ]


def king_neighbours(r: int, c: int, rows: int, cols: int) -> list[Cell]:
    return [
        (r + dr, c + dc)
        for dr in (-1, 0, 1)
        for dc in (-1, 0, 1)
        if (dr or dc) and 0 <= r + dr < rows and 0 <= c + dc < cols
    ]


def has_2x2(cells: set[Cell]) -> bool:
    return any((r + 1, c) in cells and (r, c + 1) in cells and (r + 1, c + 1) in cells for r, c in cells)


def grow_regions(
    rng: random.Random, rows: int, cols: int, seeds: list[set[Cell]], max_size: int = 99
) -> list[list[int]]:
    """Assign every cell to a region: region i starts as seeds[i] and regions grow into free
    neighbouring cells at random until the grid is covered (a region stops at max_size while
    another can still take the cell). Returns the region index of each cell."""
    owner = [[-1] * cols for _ in range(rows)]
    sizes = []
    for i, seed in enumerate(seeds):
        for r, c in seed:
            owner[r][c] = i
        sizes.append(len(seed))
    free = sum(row.count(-1) for row in owner)
    while free:
        options = []
        for r in range(rows):
            for c in range(cols):
                if owner[r][c] == -1:
                    for nr, nc in neighbours(r, c, rows, cols):
                        if owner[nr][nc] != -1:
                            options.append((r, c, owner[nr][nc]))
        small = [o for o in options if sizes[o[2]] < max_size]
        r, c, i = rng.choice(small or options)
        owner[r][c] = i
        sizes[i] += 1
        free -= 1
    return owner


def random_partition(
    rng: random.Random, rows: int, cols: int, max_size: int, min_target: int | None = None
) -> list[list[int]]:
    """A random partition of the grid into connected regions of 1..max_size cells (each grown towards
    a size drawn from min_target..max_size; one boxed in by other regions stays smaller)."""
    owner = [[-1] * cols for _ in range(rows)]
    count = 0
    cells = [(r, c) for r in range(rows) for c in range(cols)]
    rng.shuffle(cells)
    for start in cells:
        if owner[start[0]][start[1]] != -1:
            continue
        target = rng.randint(max(1, max_size - 2) if min_target is None else min_target, max_size)
        region = [start]
        owner[start[0]][start[1]] = count
        while len(region) < target:
            frontier = [nb for r, c in region for nb in neighbours(r, c, rows, cols) if owner[nb[0]][nb[1]] == -1]
            if not frontier:
                break
            nr, nc = rng.choice(frontier)
            owner[nr][nc] = count
            region.append((nr, nc))
        count += 1
    return owner


def label_grid(owner: list[list[int]]) -> list[str]:
    return ["".join(LABELS[i] for i in row) for row in owner]


def region_cells(regions: list[str]) -> dict[str, set[Cell]]:
    out: dict[str, set[Cell]] = {}
    for r, row in enumerate(regions):
        for c, ch in enumerate(row):
            out.setdefault(ch, set()).add((r, c))
    return out


def shaded(grid: list[list[str]], mark: str = "#") -> set[Cell]:
    return {(r, c) for r, row in enumerate(grid) for c, ch in enumerate(row) if ch == mark}
