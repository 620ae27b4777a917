"""Araf: divide the grid into regions (groups of cells joined by sides) so that every region holds exactly
two numbered cells and its size is strictly between those two numbers.

Cases: a 6x6 or 7x7 grid cut into random connected regions of 2 to 6 cells; in each, two cells get a
number below and a number above its size (by 1 to 4). The answer is the grid, each cell the letter of its
region (one letter a region, its cells connected); the check reads the regions off the letters and the
rule, so any valid division scores.
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.bootcamp.envs.pencil._grid import RULES_TAIL, render
from ptbench.bootcamp.envs.pencil._shapes4 import layout, parse_regions, partition, regions_of

NAME = "araf"
TITLE = "Araf"


def generate(rng: random.Random) -> dict[str, Any]:
    size = rng.choice((6, 7))
    solution = layout(partition(rng, size, size, 2, 6))
    clues = [[0] * size for _ in range(size)]
    for cells in regions_of(solution).values():
        (r1, c1), (r2, c2) = rng.sample(cells, 2)
        clues[r1][c1] = rng.randint(max(1, len(cells) - 4), len(cells) - 1)
        clues[r2][c2] = rng.randint(len(cells) + 1, len(cells) + 4)
    return {"size": size, "clues": clues, "solution": solution}


def prompt(case: dict[str, Any]) -> str:
    size = case["size"]
    shown = "\n".join(" ".join(f"{v:>2}" if v else " ." for v in row) for row in case["clues"])
    return (
        f"Araf puzzle on a {size}x{size} grid. Some cells hold a number; '.' is a cell without one.\n"
        "Divide the whole grid into regions, each a group of cells connected through shared sides, so that:\n"
        "1. every region holds exactly two numbered cells;\n"
        "2. the number of cells of a region is strictly between its two numbers (greater than the smaller, less "
        "than the larger).\n\n"
        f"Puzzle:\n{shown}\n\n"
        f"Answer: the grid, {size} lines of {size} cells, each cell the letter (A-Z, a-z) of its region: cells of "
        "one region share a letter, different regions have different letters, and the cells of a letter must "
        f"be connected. {RULES_TAIL}"
    )


def answer(case: dict[str, Any]) -> str:
    return render(case["solution"])


def check(case: dict[str, Any], text: str) -> bool:
    size, clues = case["size"], case["clues"]
    regions = parse_regions(text, size, size)
    if regions is None:
        return False
    for cells in regions:
        numbers = sorted(clues[r][c] for r, c in cells if clues[r][c])
        if len(numbers) != 2 or not numbers[0] < len(cells) < numbers[1]:
            return False
    return True
