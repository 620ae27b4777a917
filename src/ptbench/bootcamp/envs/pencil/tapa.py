"""Tapa: shade cells so that each clue cell's numbers are the lengths of the shaded blocks among its
eight neighbours; the shading is connected, has no 2x2 block, and leaves clue cells unshaded."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil._regions import (
    SHADE_FORMAT,
    Cell,
    connected,
    has_2x2,
    neighbours,
    parse_grid,
    shaded,
)

NAME = "tapa"
TITLE = "Tapa"
SIZE = 6
_RING = ((-1, -1), (-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1))  # clockwise


def ring_clue(cells: set[Cell], r: int, c: int) -> list[int]:
    """The sorted lengths of the runs of shaded cells round (r, c) ([0] when none is shaded)."""
    ring = [(r + dr, c + dc) in cells for dr, dc in _RING]
    if all(ring):
        return [8]
    if not any(ring):
        return [0]
    k = ring.index(False)
    ring = ring[k:] + ring[:k]  # start on an unshaded cell so no run wraps round
    runs, run = [], 0
    for on in [*ring, False]:
        if on:
            run += 1
        elif run:
            runs.append(run)
            run = 0
    return sorted(runs)


def generate(rng: random.Random) -> dict:
    """Grow a connected shading without 2x2 blocks, then put clues on some unshaded cells."""
    n = SIZE
    while True:
        cells = {(rng.randrange(n), rng.randrange(n))}
        target = rng.randint(n * n * 2 // 5, n * n // 2)
        while len(cells) < target:
            options = sorted(
                {nb for r, c in cells for nb in neighbours(r, c, n, n) if nb not in cells and not has_2x2(cells | {nb})}
            )
            if not options:
                break
            cells.add(rng.choice(options))
        white = [(r, c) for r in range(n) for c in range(n) if (r, c) not in cells]
        if len(white) < 10:
            continue
        spots = sorted(rng.sample(white, rng.randint(8, 10)))
        clues = [[r, c, ring_clue(cells, r, c)] for r, c in spots]
        if any(clue != [0] for _, _, clue in clues):
            break
    return {
        "size": n,
        "clues": clues,
        "solution": ["".join("#" if (r, c) in cells else "." for c in range(n)) for r in range(n)],
    }


def prompt(case: dict) -> str:
    n = case["size"]
    shown = [["."] * n for _ in range(n)]
    for r, c, clue in case["clues"]:
        shown[r][c] = "".join(map(str, clue))
    width = max(len(x) for row in shown for x in row)
    board = "\n".join(" ".join(x.rjust(width) for x in row) for row in shown)
    return (
        f"Solve this Tapa puzzle on a {n}x{n} grid. Numbers are clue cells; '.' is an empty cell:\n\n"
        f"{board}\n\n"
        "Rules: shade some of the empty cells. A clue cell is never shaded. The digits of a clue are the "
        "lengths of the groups of consecutive shaded cells among the (up to) eight cells around it, "
        "going round it in a circle (for example 31 means one group of three and one group of one, in "
        "any order; 0 means none of them is shaded; cells outside the grid count as unshaded). All "
        "shaded cells form one orthogonally connected group, and no 2x2 block of cells is entirely "
        "shaded.\n\n" + SHADE_FORMAT + " Write clue cells as '.'."
    )


def answer(case: dict) -> str:
    return "\n".join(" ".join(row) for row in case["solution"])


def check(case: dict, text: str) -> bool:
    n = case["size"]
    grid = parse_grid(text, n, n, "#.")
    if grid is None:
        return False
    cells = shaded(grid)
    if not connected(cells) or has_2x2(cells):
        return False
    return all((r, c) not in cells and ring_clue(cells, r, c) == clue for r, c, clue in case["clues"])
