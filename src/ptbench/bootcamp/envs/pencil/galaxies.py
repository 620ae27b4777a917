"""Galaxies (Tentai Show): cut the grid into regions, each holding exactly one dot and symmetric under a
half turn about it."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil._regions import LABELS, Cell, connected, label_grid, neighbours, parse_grid, render

NAME = "galaxies"
TITLE = "Galaxies (Tentai Show)"
SIZE = 6
_ALPHABET = LABELS + "0123456789"

# a dot is (R, C) in doubled coordinates: cell (r, c) has its centre at (2r, 2c), so R and C odd put the
# dot on an edge or a corner; the half turn about it takes cell (r, c) to (R - r, C - c)


def touching(dot: tuple[int, int]) -> set[Cell]:
    """The cells whose closure holds the dot (1, 2 or 4 of them)."""
    R, C = dot
    rows = {R // 2, (R + 1) // 2}
    cols = {C // 2, (C + 1) // 2}
    return {(r, c) for r in rows for c in cols}


def _mirror(cell: Cell, dot: tuple[int, int]) -> Cell:
    return dot[0] - cell[0], dot[1] - cell[1]


def generate(rng: random.Random) -> dict:
    """Grow symmetric regions one at a time from random free seeds (a cell, a domino or a 2x2 block),
    adding a cell and its mirror image together, until every cell has a region."""
    n = SIZE
    owner = [[-1] * n for _ in range(n)]
    dots: list[list[int]] = []
    free = [(r, c) for r in range(n) for c in range(n)]
    rng.shuffle(free)
    for r, c in free:
        if owner[r][c] != -1:
            continue
        seeds = [(2 * r, 2 * c)]
        for R, C in ((2 * r + 1, 2 * c), (2 * r, 2 * c + 1), (2 * r + 1, 2 * c + 1)):
            cells = touching((R, C))
            if all(0 <= a < n and 0 <= b < n and owner[a][b] == -1 for a, b in cells):
                seeds.append((R, C))
        dot = rng.choice(seeds)
        k = len(dots)
        region = touching(dot)
        for a, b in region:
            owner[a][b] = k
        target = rng.randint(4, 14)
        while len(region) < target:
            options = []
            for cell in sorted(region):
                for nb in neighbours(*cell, n, n):
                    m = _mirror(nb, dot)
                    if owner[nb[0]][nb[1]] == -1 and 0 <= m[0] < n and 0 <= m[1] < n and owner[m[0]][m[1]] == -1:
                        options.append(nb)
            if not options:
                break
            nb = rng.choice(options)
            for a, b in {nb, _mirror(nb, dot)}:
                owner[a][b] = k
                region.add((a, b))
        dots.append(list(dot))
    return {"size": n, "dots": dots, "solution": label_grid(owner)}


def _describe(dot: list[int]) -> str:
    R, C = dot
    cells = sorted(touching((R, C)))
    names = ", ".join(f"({r + 1},{c + 1})" for r, c in cells)
    if len(cells) == 1:
        return f"the centre of cell {names}"
    if len(cells) == 2:
        return f"the middle of the edge between cells {names}"
    return f"the corner shared by cells {names}"


def prompt(case: dict) -> str:
    n = case["size"]
    listing = "\n".join(f"- dot {i + 1}: {_describe(d)}" for i, d in enumerate(case["dots"]))
    return (
        f"Solve this Galaxies (Tentai Show) puzzle on a {n}x{n} grid. Cells are named (row,column), rows "
        f"1 to {n} from the top and columns 1 to {n} from the left. There are {len(case['dots'])} dots:\n"
        f"{listing}\n\n"
        "Rules: divide the grid into regions (galaxies) of orthogonally connected cells so that every "
        "region contains exactly one dot, with all the cells that the dot touches inside that region, "
        "and every region is symmetric under a 180-degree rotation about its dot. Every cell belongs to "
        "exactly one region.\n\n"
        "Write the solution inside <answer></answer>: one line per row, one character per cell, each "
        "cell as a label (a letter or digit) naming its region: cells of the same region share a label, "
        "different regions use different labels (spaces between cells are allowed). Write exactly one "
        "grid and nothing else inside the tags."
    )


def answer(case: dict) -> str:
    return render(case["solution"])


def check(case: dict, text: str) -> bool:
    n = case["size"]
    grid = parse_grid(text, n, n, _ALPHABET)
    if grid is None:
        return False
    regions: dict[str, set[Cell]] = {}
    for r in range(n):
        for c in range(n):
            regions.setdefault(grid[r][c], set()).add((r, c))
    dots = [tuple(d) for d in case["dots"]]
    if len(regions) != len(dots):
        return False
    for cells in regions.values():
        inside = [d for d in dots if touching((d[0], d[1])) <= cells]
        if len(inside) != 1 or not connected(cells):
            return False
        dot = (inside[0][0], inside[0][1])
        if any(_mirror(cell, dot) not in cells for cell in cells):
            return False
    return True
