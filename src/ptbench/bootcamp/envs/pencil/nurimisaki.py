"""Nurimisaki: shade some cells so that the white cells form one connected group, no 2x2 block is all
white or all shaded, the circled cells are exactly the white cells with one white neighbour (the "capes"),
and a number in a circle says how many white cells run straight from it, itself included, towards its one
white neighbour, up to the first shaded cell or the edge.

Cases: a 6x6 or 7x7 grid whose white cells are grown at random from one cell (a cell joins while no 2x2
block turns all white, until none can; a growth that leaves a 2x2 shaded block is grown again); every
cape is circled, about two thirds of the circles numbered. The answer is the grid, `#` shaded and `.`
white; the check reads the rules, so any valid shading scores.
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.bootcamp.envs.pencil._grid import RULES_TAIL, connected, neighbours, parse_grid, render

NAME = "nurimisaki"
TITLE = "Nurimisaki"


def _blocks(size: int) -> list[list[tuple[int, int]]]:
    return [[(r, c), (r + 1, c), (r, c + 1), (r + 1, c + 1)] for r in range(size - 1) for c in range(size - 1)]


def run(white: set[tuple[int, int]], r: int, c: int, size: int) -> int:
    """How many white cells run straight from the cape (r, c), itself included, towards its white neighbour."""
    (nr, nc) = next(n for n in neighbours(r, c, size, size) if n in white)
    dr, dc, total = nr - r, nc - c, 1
    while (r + dr, c + dc) in white:
        r, c, total = r + dr, c + dc, total + 1
    return total


def capes(white: set[tuple[int, int]], size: int) -> set[tuple[int, int]]:
    return {cell for cell in white if sum(n in white for n in neighbours(*cell, size, size)) == 1}


def generate(rng: random.Random) -> dict[str, Any]:
    size = rng.choice((6, 7))
    while True:
        white = {(rng.randrange(size), rng.randrange(size))}
        while True:
            frontier = sorted({n for cell in white for n in neighbours(*cell, size, size)} - white)
            rng.shuffle(frontier)
            for cell in frontier:
                grown = white | {cell}
                if not any(all(p in grown for p in block) for block in _blocks(size) if cell in block):
                    white = grown
                    break
            else:
                break
        if any(not any(p in white for p in block) for block in _blocks(size)):
            continue
        ends = capes(white, size)
        if len(ends) >= 3:
            break
    numbered = set(rng.sample(sorted(ends), max(2, round(len(ends) * 2 / 3))))
    clues = [
        ["." if (r, c) not in ends else str(run(white, r, c, size)) if (r, c) in numbered else "o" for c in range(size)]
        for r in range(size)
    ]
    solution = ["".join("." if (r, c) in white else "#" for c in range(size)) for r in range(size)]
    return {"size": size, "clues": ["".join(row) for row in clues], "solution": solution}


def prompt(case: dict[str, Any]) -> str:
    size = case["size"]
    return (
        f"Nurimisaki puzzle on a {size}x{size} grid. In the grid below, o is a circled cell, a digit is a circled "
        "cell with that number, and '.' is a plain cell.\n"
        "Shade some cells so that:\n"
        "1. all white (unshaded) cells form one group connected through shared sides;\n"
        "2. no 2x2 block of cells is all white, and no 2x2 block is all shaded;\n"
        "3. the circled cells are white, and they are exactly the white cells that have one white neighbour "
        "(among the cells sharing a side with them): every white cell with exactly one white neighbour is "
        "circled, and every circled cell has exactly one white neighbour;\n"
        "4. a number in a circle is how many white cells run in a straight line from that cell, itself "
        "included, towards its one white neighbour, up to the first shaded cell or the edge of the grid.\n\n"
        f"Puzzle:\n{render(case['clues'])}\n\n"
        f"Answer: the grid, {size} lines of {size} cells, # for a shaded cell and . for a white one (circled "
        f"cells are white: write them as .). {RULES_TAIL}"
    )


def answer(case: dict[str, Any]) -> str:
    return render(case["solution"])


def check(case: dict[str, Any], text: str) -> bool:
    size, clues = case["size"], case["clues"]
    got = parse_grid(text, size, size, ".#")
    if got is None:
        return False
    white = {(r, c) for r in range(size) for c in range(size) if got[r][c] == "."}
    if not white or not connected(white):
        return False
    if any(len({got[r][c] for r, c in block}) == 1 for block in _blocks(size)):
        return False  # a 2x2 block all white or all shaded
    circled = {(r, c) for r in range(size) for c in range(size) if clues[r][c] != "."}
    if circled != capes(white, size):
        return False
    return all(clues[r][c] == "o" or run(white, r, c, size) == int(clues[r][c]) for r, c in circled)
