"""Country Road: draw one closed loop through cell centres that visits every region exactly once (enters
it once and leaves it once), passes through as many cells of a numbered region as its number says, and
leaves no two side-by-side cells of different regions both unvisited.

Cases: a 6x6 or 7x7 grid and a random loop (a 2x2 loop pushed outwards at random), cut into runs of 1 to
5 cells; each run starts a region, and each group of cells off the loop joins, whole, a region beside it.
Every region shows its run's length in a random cell. The answer is the grid of loop pieces and
`.`; the check follows the loop and reads each region, so any valid loop scores.
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.bootcamp.envs.pencil._grid import LABELS, RULES_TAIL, neighbours, parse_grid, render
from ptbench.bootcamp.envs.pencil._shapes4 import LOOP_LEGEND, PIECES, loop_grid, random_loop, read_loop

NAME = "country_road"
TITLE = "Country Road"


def _regions(rng: random.Random, loop: list[tuple[int, int]], size: int) -> list[list[int]]:
    owner = [[-1] * size for _ in range(size)]
    start = rng.randrange(len(loop))
    order = loop[start:] + loop[:start]
    k = count = 0
    while k < len(order):
        run = rng.randint(1, 5)
        for r, c in order[k : k + run]:
            owner[r][c] = count
        k, count = k + run, count + 1
    for r0 in range(size):
        for c0 in range(size):
            if owner[r0][c0] != -1:
                continue
            group, stack = {(r0, c0)}, [(r0, c0)]
            while stack:
                for n in neighbours(*stack.pop(), size, size):
                    if owner[n[0]][n[1]] == -1 and n not in group:
                        group.add(n)
                        stack.append(n)
            beside = sorted({owner[n[0]][n[1]] for cell in group for n in neighbours(*cell, size, size)} - {-1})
            into = rng.choice(beside)
            for r, c in group:
                owner[r][c] = into
    return owner


def generate(rng: random.Random) -> dict[str, Any]:
    size = rng.choice((6, 7))
    loop = random_loop(rng, size, size, rng.randint(size, 2 * size))
    owner = _regions(rng, loop, size)
    solution = loop_grid(loop, size, size)
    on = set(loop)
    numbers = [["."] * size for _ in range(size)]
    for k in range(max(map(max, owner)) + 1):
        cells = [(r, c) for r in range(size) for c in range(size) if owner[r][c] == k]
        r, c = rng.choice(cells)
        numbers[r][c] = str(sum(cell in on for cell in cells))
    return {"size": size, "regions": ["".join(LABELS[k] for k in row) for row in owner],
            "numbers": ["".join(row) for row in numbers], "solution": solution}  # fmt: skip


def prompt(case: dict[str, Any]) -> str:
    size = case["size"]
    return (
        f"Country Road puzzle on a {size}x{size} grid, divided into regions; the first grid shows each cell's "
        "region letter (cells with the same letter are one region), the second the numbers of some regions "
        "('.' is a cell without a number).\n"
        "Draw one closed loop through the centres of cells joined by sides (it passes through a cell at most once, "
        "never branches or crosses) so that:\n"
        "1. the loop visits every region exactly once: it enters each region once and leaves it once;\n"
        "2. a region with a number has exactly that many of its cells on the loop;\n"
        "3. no two cells sharing a side and lying in different regions are both off the loop.\n\n"
        f"Regions:\n{render(case['regions'])}\n\nNumbers:\n{render(case['numbers'])}\n\n"
        f"Answer: the grid, {size} lines of {size} cells: for every loop cell its piece ({LOOP_LEGEND}) and . "
        f"for every other cell. {RULES_TAIL}"
    )


def answer(case: dict[str, Any]) -> str:
    return render(case["solution"])


def check(case: dict[str, Any], text: str) -> bool:
    size, regions, numbers = case["size"], case["regions"], case["numbers"]
    got = parse_grid(text, size, size, "." + "".join(PIECES))
    if got is None:
        return False
    loop = read_loop(got)
    if loop is None:
        return False
    on = set(loop)
    for r in range(size):
        for c in range(size):
            for n in neighbours(r, c, size, size):
                if regions[n[0]][n[1]] != regions[r][c] and (r, c) not in on and n not in on:
                    return False
    crossings: dict[str, int] = {}
    for k, (r, c) in enumerate(loop):
        nr, nc = loop[(k + 1) % len(loop)]
        if regions[r][c] != regions[nr][nc]:
            crossings[regions[r][c]] = crossings.get(regions[r][c], 0) + 1
            crossings[regions[nr][nc]] = crossings.get(regions[nr][nc], 0) + 1
    labels = {ch for row in regions for ch in row}
    if any(crossings.get(label) != 2 for label in labels):
        return False  # a region missed, or entered more than once
    return all(
        sum(regions[a][b] == regions[r][c] and (a, b) in on for a in range(size) for b in range(size)) == int(v)
        for r, row in enumerate(numbers)
        for c, v in enumerate(row)
        if v != "."
    )
