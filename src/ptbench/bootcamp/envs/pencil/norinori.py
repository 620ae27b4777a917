"""Norinori: shade two cells in every region so that every shaded cell belongs to exactly one domino."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil._regions import (
    SHADE_FORMAT,
    grow_regions,
    label_grid,
    neighbours,
    parse_grid,
    region_cells,
    render,
    shaded,
)

NAME = "norinori"
TITLE = "Norinori"
SIZE = 7


def generate(rng: random.Random) -> dict:
    """Plant dominoes that do not touch each other, then grow one region around each domino."""
    while True:
        taken: set[tuple[int, int]] = set()
        dominoes: list[set[tuple[int, int]]] = []
        for _ in range(400):
            r, c = rng.randrange(SIZE), rng.randrange(SIZE)
            dr, dc = rng.choice(((0, 1), (1, 0)))
            other = (r + dr, c + dc)
            if other[0] >= SIZE or other[1] >= SIZE:
                continue
            pair = {(r, c), other}
            halo = pair | {nb for cell in pair for nb in neighbours(*cell, SIZE, SIZE)}
            if halo & taken:
                continue
            taken |= pair
            dominoes.append(pair)
        if len(dominoes) >= 9:
            break
    owner = grow_regions(rng, SIZE, SIZE, dominoes, max_size=5)
    solution = [["#" if (r, c) in taken else "." for c in range(SIZE)] for r in range(SIZE)]
    return {
        "size": SIZE,
        "regions": label_grid(owner),
        "solution": ["".join(row) for row in solution],
    }


def prompt(case: dict) -> str:
    n = case["size"]
    return (
        f"Solve this Norinori puzzle. The {n}x{n} grid is divided into regions; each letter below "
        "names the region a cell belongs to.\n\n"
        f"{render(case['regions'])}\n\n"
        "Rules: shade cells so that every region contains exactly two shaded cells, and every shaded "
        "cell is orthogonally adjacent to exactly one other shaded cell (so the shaded cells form "
        "dominoes, 1x2 blocks, that do not touch each other along an edge; a domino may cross a "
        "region border).\n\n" + SHADE_FORMAT
    )


def answer(case: dict) -> str:
    return render(case["solution"])


def check(case: dict, text: str) -> bool:
    n = case["size"]
    grid = parse_grid(text, n, n, "#.")
    if grid is None:
        return False
    cells = shaded(grid)
    for r, c in cells:
        if sum(nb in cells for nb in neighbours(r, c, n, n)) != 1:
            return False
    return all(len(region & cells) == 2 for region in region_cells(case["regions"]).values())
