"""Shimaguni (Islands): shade some cells so that every region holds exactly one island (a non-empty group
of shaded cells joined by sides), shaded cells of different regions never share a side, the islands of
two regions that share a border differ in size, and a numbered region's island has that many cells.

Cases: a 6x6 or 7x7 grid cut into random connected regions of 3 to 6 cells; in each region, in random
order, an island of one of the two smallest sizes no bordering region's island has is grown at random,
away from the other islands and off the region's border where it can (a layout that gets stuck is made
again); about four fifths of the regions show their island's size. The answer is the grid, `#` shaded
and `.` white; the check reads the rules, so any valid shading scores.
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.bootcamp.envs.pencil._grid import RULES_TAIL, connected, neighbours, parse_grid, render
from ptbench.bootcamp.envs.pencil._shapes4 import layout, partition, regions_of

NAME = "shimaguni"
TITLE = "Shimaguni (Islands)"


def _pick(rng: random.Random, regions: list[str], label: str, options: list[tuple[int, int]]) -> tuple[int, int]:
    """A random one of the options with fewest cells of other regions beside it."""
    size = len(regions)
    border = {p: sum(regions[n[0]][n[1]] != label for n in neighbours(*p, size, size)) for p in options}
    return rng.choice([p for p in options if border[p] == min(border.values())])


def _islands(rng: random.Random, regions: list[str]) -> set[tuple[int, int]] | None:
    size = len(regions)
    members = regions_of(regions)
    shaded: set[tuple[int, int]] = set()
    sizes: dict[str, int] = {}
    for label in rng.sample(sorted(members), len(members)):
        cells = members[label]
        near = {regions[n[0]][n[1]] for cell in cells for n in neighbours(*cell, size, size)} - {label}
        taken = {sizes[other] for other in near if other in sizes}
        allowed = [cell for cell in cells if not any(n in shaded for n in neighbours(*cell, size, size))]
        wanted = [k for k in range(1, len(cells) + 1) if k not in taken]
        if not allowed or not wanted:
            return None
        target = rng.choice(wanted[:2])

        island = {_pick(rng, regions, label, allowed)}
        while len(island) < target:
            grow = sorted({n for cell in island for n in neighbours(*cell, size, size) if n in allowed} - island)
            if not grow:
                return None
            island.add(_pick(rng, regions, label, grow))
        shaded |= island
        sizes[label] = len(island)
    return shaded


def generate(rng: random.Random) -> dict[str, Any]:
    size = rng.choice((6, 7))
    shaded = None
    while shaded is None:
        regions = layout(partition(rng, size, size, 3, 6))
        shaded = _islands(rng, regions)
    numbers = [["."] * size for _ in range(size)]
    for cells in regions_of(regions).values():
        if rng.random() < 0.8:
            r, c = rng.choice(cells)
            numbers[r][c] = str(sum(cell in shaded for cell in cells))
    solution = ["".join("#" if (r, c) in shaded else "." for c in range(size)) for r in range(size)]
    return {"size": size, "regions": regions, "numbers": ["".join(row) for row in numbers], "solution": solution}


def prompt(case: dict[str, Any]) -> str:
    size = case["size"]
    return (
        f"Shimaguni (Islands) puzzle on a {size}x{size} grid, divided into regions; the first grid shows each "
        "cell's region letter (cells with the same letter are one region), the second the numbers of some "
        "regions ('.' is a cell without a number).\n"
        "Shade some cells so that:\n"
        "1. every region holds exactly one island: its shaded cells are at least one and form one group "
        "connected through shared sides;\n"
        "2. shaded cells of different regions never share a side;\n"
        "3. the islands of two regions that share a border have different numbers of cells;\n"
        "4. a region with a number has an island of exactly that many cells.\n\n"
        f"Regions:\n{render(case['regions'])}\n\nNumbers:\n{render(case['numbers'])}\n\n"
        f"Answer: the grid, {size} lines of {size} cells, # for a shaded cell and . for a white one. {RULES_TAIL}"
    )


def answer(case: dict[str, Any]) -> str:
    return render(case["solution"])


def check(case: dict[str, Any], text: str) -> bool:
    size, regions, numbers = case["size"], case["regions"], case["numbers"]
    got = parse_grid(text, size, size, ".#")
    if got is None:
        return False
    sizes = {}
    for label, cells in regions_of(regions).items():
        island = {(r, c) for r, c in cells if got[r][c] == "#"}
        if not island or not connected(island):
            return False
        sizes[label] = len(island)
        if any(numbers[r][c] != "." and int(numbers[r][c]) != len(island) for r, c in cells):
            return False
    for r in range(size):
        for c in range(size):
            for nr, nc in neighbours(r, c, size, size):
                a, b = regions[r][c], regions[nr][nc]
                if a != b and (sizes[a] == sizes[b] or got[r][c] == got[nr][nc] == "#"):
                    return False
    return True
