"""Sukoro: write a number 1-4 in some cells so that each number says how many of its side neighbours hold a
number, no two equal numbers share a side, and the numbered cells form one connected group.

Cases: a 6x6 or 7x7 grid whose numbered cells are grown at random from one cell (a cell joins only while
no two equal numbers would touch) to about half the grid; about a third of the numbers are shown, and
about a third of the empty cells are shown as empty (x). The answer is the grid, digits and `.` for
empty; the check reads the rules and the shown cells, so any valid filling scores.
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.bootcamp.envs.pencil._grid import RULES_TAIL, connected, neighbours, parse_grid, render

NAME = "sukoro"
TITLE = "Sukoro"


def _numbers(cells: set[tuple[int, int]], size: int) -> dict[tuple[int, int], int]:
    return {cell: sum(n in cells for n in neighbours(*cell, size, size)) for cell in cells}


def _clash(num: dict[tuple[int, int], int], size: int) -> bool:
    return any(num.get(n) == v for cell, v in num.items() for n in neighbours(*cell, size, size))


def _clashes(cells: set[tuple[int, int]], size: int) -> int:
    num = _numbers(cells, size)
    return sum(num.get(n) == v for cell, v in num.items() for n in neighbours(*cell, size, size))


def _grow(rng: random.Random, size: int) -> set[tuple[int, int]]:
    """A connected set of at least a third of the cells whose counts never touch an equal count: a random walk
    that adds a neighbouring cell or drops one (keeping the set connected), taking a step unless it adds
    clashes or (by chance) shrinks the set."""
    r, c = rng.randrange(size), rng.randrange(size - 2)
    cells = {(r, c), (r, c + 1), (r, c + 2)}  # 1 2 1
    score, best = 0, set(cells)
    for _ in range(3000):
        if rng.random() < 0.6:
            frontier = sorted({n for cell in cells for n in neighbours(*cell, size, size)} - cells)
            trial = cells | {rng.choice(frontier)}
        else:
            trial = cells - {rng.choice(sorted(cells))}
            if len(trial) < 3 or not connected(trial):
                continue
        new = _clashes(trial, size)
        if new <= score or rng.random() < 0.05:
            cells, score = trial, new
            if score == 0 and len(cells) > len(best):
                best = set(cells)
                if len(best) >= size * size // 2:
                    break
    return best


def generate(rng: random.Random) -> dict[str, Any]:
    size = rng.choice((6, 7))
    cells: set[tuple[int, int]] = set()
    while len(cells) < size * size // 3:
        cells = _grow(rng, size)
    num = _numbers(cells, size)
    solution = ["".join(str(num[(r, c)]) if (r, c) in num else "." for c in range(size)) for r in range(size)]
    empty = sorted({(r, c) for r in range(size) for c in range(size)} - cells)
    shown = set(rng.sample(sorted(cells), round(len(cells) / 3))) | set(rng.sample(empty, round(len(empty) / 3)))
    clues = ["".join(solution[r][c].replace(".", "x") if (r, c) in shown else "?" for c in range(size))
             for r in range(size)]  # fmt: skip
    return {"size": size, "clues": clues, "solution": solution}


def prompt(case: dict[str, Any]) -> str:
    size = case["size"]
    return (
        f"Sukoro puzzle on a {size}x{size} grid. In the grid below, a digit is a cell that holds that number, x is "
        "a cell that stays empty, and ? is a cell you decide.\n"
        "Write a number from 1 to 4 in some cells (leave the others empty) so that:\n"
        "1. every number is how many of its neighbours (the cells sharing a side with it) hold a number;\n"
        "2. no two equal numbers share a side;\n"
        "3. all numbered cells form one group connected through shared sides;\n"
        "4. the shown numbers and empty cells stay as shown.\n\n"
        f"Puzzle:\n{render(case['clues'])}\n\n"
        f"Answer: the grid, {size} lines of {size} cells, each cell its number (1-4) or . for an empty cell. "
        f"{RULES_TAIL}"
    )


def answer(case: dict[str, Any]) -> str:
    return render(case["solution"])


def check(case: dict[str, Any], text: str) -> bool:
    size, clues = case["size"], case["clues"]
    got = parse_grid(text, size, size, ".1234")
    if got is None:
        return False
    if any(clues[r][c] != "?" and clues[r][c] != got[r][c].replace(".", "x") for r in range(size) for c in range(size)):
        return False
    cells = {(r, c) for r in range(size) for c in range(size) if got[r][c] != "."}
    if not cells or not connected(cells):
        return False
    num = _numbers(cells, size)
    return all(int(got[r][c]) == num[(r, c)] for r, c in cells) and not _clash(num, size)
