"""Yajilin: shade some cells and draw one closed loop through all the other cells, so that no two shaded
cells share a side, the loop passes through every cell that is neither shaded nor a clue (through each
once, turning only at cell centres), and each clue says how many shaded cells lie in its direction.

Cases: a 6x6 or 7x7 grid and a random loop (a 2x2 loop pushed outwards at random); the cells off the loop
are shaded at random where no shaded neighbour forbids it, and the rest of them, with a few shaded cells,
become clues (a random direction with cells that way, and the number of shaded cells that way). The
answer is the grid: loop pieces, `#` shaded, `*` the clue cells; the check follows the loop and reads the
rules and clues, so any valid answer scores.
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.bootcamp.envs.pencil._grid import RULES_TAIL, cell_name, neighbours, parse_grid, render
from ptbench.bootcamp.envs.pencil._shapes4 import LOOP_LEGEND, PIECES, loop_grid, random_loop, read_loop

NAME = "yajilin"
TITLE = "Yajilin"
ARROWS = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}


def shaded_towards(grid: list[str], r: int, c: int, way: str) -> int:
    dr, dc = ARROWS[way]
    size, total = len(grid), 0
    r, c = r + dr, c + dc
    while 0 <= r < size and 0 <= c < size:
        total += grid[r][c] == "#"
        r, c = r + dr, c + dc
    return total


def generate(rng: random.Random) -> dict[str, Any]:
    size = rng.choice((6, 7))
    loop = random_loop(rng, size, size, rng.randint(size + 2, 2 * size))
    off = sorted({(r, c) for r in range(size) for c in range(size)} - set(loop))
    rng.shuffle(off)
    shaded: set[tuple[int, int]] = set()
    for cell in off:
        if not any(n in shaded for n in neighbours(*cell, size, size)):
            shaded.add(cell)
    clue_cells = set(off) - shaded
    extra = sorted(shaded)
    rng.shuffle(extra)
    while len(clue_cells) < 4 and extra:
        cell = extra.pop()
        shaded.discard(cell)
        clue_cells.add(cell)
    fill = ["".join("#" if (r, c) in shaded else "*" if (r, c) in clue_cells else "." for c in range(size))
            for r in range(size)]  # fmt: skip
    solution = loop_grid(loop, size, size, fill)
    clues = []
    for r, c in sorted(clue_cells):
        ways = [w for w, (dr, dc) in sorted(ARROWS.items()) if 0 <= r + dr < size and 0 <= c + dc < size]
        way = rng.choice(ways)
        clues.append([r, c, way, shaded_towards(solution, r, c, way)])
    return {"size": size, "clues": clues, "solution": solution}


def prompt(case: dict[str, Any]) -> str:
    size = case["size"]
    marks = {(r, c) for r, c, _, _ in case["clues"]}
    shown = ["".join("*" if (r, c) in marks else "." for c in range(size)) for r in range(size)]
    where = {"up": "above", "down": "below", "left": "to the left", "right": "to the right"}
    listed = "\n".join(
        f"- {cell_name(r, c)}: {n} shaded cell{'s' if n != 1 else ''} {where[way]}" for r, c, way, n in case["clues"]
    )
    return (
        f"Yajilin puzzle on a {size}x{size} grid. The cells marked * are clue cells; each clue counts the shaded "
        "cells in one direction, from the clue cell to the edge of the grid (cells are (row,col), from 1).\n"
        "Shade some of the other cells and draw one closed loop so that:\n"
        "1. no two shaded cells share a side; clue cells are neither shaded nor on the loop;\n"
        "2. the loop runs through the centres of cells joined by sides, goes through every cell that is neither "
        "shaded nor a clue cell, passes through each such cell exactly once, and never branches or crosses;\n"
        "3. each clue's count of shaded cells is right.\n\n"
        f"Grid:\n{render(shown)}\nClues:\n{listed}\n\n"
        f"Answer: the grid, {size} lines of {size} cells: # for a shaded cell, * for a clue cell, and for every "
        f"loop cell its piece: {LOOP_LEGEND}. {RULES_TAIL}"
    )


def answer(case: dict[str, Any]) -> str:
    return render(case["solution"])


def check(case: dict[str, Any], text: str) -> bool:
    size = case["size"]
    got = parse_grid(text, size, size, "#*" + "".join(PIECES))
    if got is None:
        return False
    marks = {(r, c) for r, c, _, _ in case["clues"]}
    if {(r, c) for r in range(size) for c in range(size) if got[r][c] == "*"} != marks:
        return False
    shaded = {(r, c) for r in range(size) for c in range(size) if got[r][c] == "#"}
    if any(n in shaded for cell in shaded for n in neighbours(*cell, size, size)):
        return False
    if read_loop(got) is None:
        return False  # every other cell holds a piece: they must make one loop
    return all(shaded_towards(got, r, c, way) == n for r, c, way, n in case["clues"])
