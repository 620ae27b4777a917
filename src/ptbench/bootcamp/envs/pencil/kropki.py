"""Kropki: fill the grid with the numbers 1 to n so that every row and every column holds each once;
a white dot between two cells side by side means their numbers are consecutive, a black dot that one is
double the other, and no dot that they are neither (1 and 2 may carry either dot).

Cases: a random 5x5 or 6x6 Latin square (filled cell by cell with random candidates, backtracking) and
every dot it makes, the pair 1-2 given a white or black dot at random. The answer is the grid of
numbers; the check reads the rows, the columns and every pair of neighbours against its dot, so any
valid square scores.
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.bootcamp.envs.pencil._paths3 import parse_numbers, render_numbers

NAME = "kropki"
TITLE = "Kropki"


def fits(a: int, b: int, dot: str) -> bool:
    """Whether neighbours a and b agree with the dot between them: o white, x black, - none."""
    consecutive, double = abs(a - b) == 1, a == 2 * b or b == 2 * a
    return {"o": consecutive, "x": double, "-": not consecutive and not double}[dot]


def _latin(rng: random.Random, n: int) -> list[list[int]] | None:
    grid = [[0] * n for _ in range(n)]
    options: list[list[int]] = []
    k, steps = 0, 0
    while k < n * n:
        steps += 1
        if steps > 20000:
            return None
        r, c = divmod(k, n)
        if len(options) <= k:
            used = set(grid[r][:c]) | {grid[i][c] for i in range(r)}
            free = [v for v in range(1, n + 1) if v not in used]
            rng.shuffle(free)
            options.append(free)
        if options[k]:
            grid[r][c] = options[k].pop()
            k += 1
        else:
            options.pop()
            grid[r][c] = 0
            k -= 1
            if k < 0:
                return None
    return grid


def _dot(rng: random.Random, a: int, b: int) -> str:
    if {a, b} == {1, 2}:
        return rng.choice("ox")
    return "o" if fits(a, b, "o") else "x" if fits(a, b, "x") else "-"


def generate(rng: random.Random) -> dict[str, Any]:
    n = rng.choice((5, 6))
    grid = None
    while grid is None:
        grid = _latin(rng, n)
    across = ["".join(_dot(rng, grid[r][c], grid[r][c + 1]) for c in range(n - 1)) for r in range(n)]
    down = ["".join(_dot(rng, grid[r][c], grid[r + 1][c]) for c in range(n)) for r in range(n - 1)]
    return {"size": n, "across": across, "down": down, "solution": grid}


def prompt(case: dict[str, Any]) -> str:
    n = case["size"]
    lines = []
    for r in range(n):
        lines.append(" ".join("_" + (f" {case['across'][r][c]}" if c < n - 1 else "") for c in range(n)))
        if r < n - 1:
            lines.append("   ".join(case["down"][r]))
    return (
        f"Kropki puzzle on a {n}x{n} grid. Below, each _ is a cell; between two cells side by side in a row "
        "stands the mark for that pair, and on the lines between the rows, under each cell, the mark between "
        "that cell and the one below it. The marks: o a white dot, x a black dot, - no dot.\n"
        f"Write a number from 1 to {n} in every cell so that:\n"
        f"1. every row and every column holds each number from 1 to {n} exactly once;\n"
        "2. two cells joined by a white dot hold consecutive numbers (they differ by 1);\n"
        "3. two cells joined by a black dot hold numbers of which one is double the other;\n"
        "4. two cells side by side with no dot hold numbers that are neither consecutive nor one double the "
        "other (every dot is shown; 1 and 2 are both, and may carry either dot).\n\n"
        "Puzzle:\n" + "\n".join(lines) + "\n\n"
        f"Answer: the grid of numbers, {n} lines of {n} numbers. Give your complete solution once, inside "
        "<answer></answer> tags, in exactly this format and nothing else inside the tags: one line per row, the "
        "row's numbers separated by single spaces."
    )


def answer(case: dict[str, Any]) -> str:
    return render_numbers(case["solution"])


def check(case: dict[str, Any], text: str) -> bool:
    n = case["size"]
    got = parse_numbers(text, n, n, 1, n)
    if got is None:
        return False
    every = set(range(1, n + 1))
    if any(set(row) != every for row in got) or any({got[r][c] for r in range(n)} != every for c in range(n)):
        return False
    if not all(fits(got[r][c], got[r][c + 1], case["across"][r][c]) for r in range(n) for c in range(n - 1)):
        return False
    return all(fits(got[r][c], got[r + 1][c], case["down"][r][c]) for r in range(n - 1) for c in range(n))
