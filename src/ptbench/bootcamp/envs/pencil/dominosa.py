"""Dominosa: the grid of numbers is a full set of dominoes laid out with their borders erased; cut it
into dominoes again so that every pair of numbers appears exactly once.

Cases: the double-4 set (15 dominoes, a 5x6 grid) or the double-5 set (21, a 6x7 grid) laid on a
random tiling, each domino at a random place and way round (a layout that every domino across, or
every domino down, would solve is laid again). The answer gives each cell the direction of
its partner (U, D, L or R); the check pairs the cells (each partner points back) and reads the pairs'
numbers (every pair of the set exactly once), so any valid cutting scores.
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.bootcamp.envs.pencil._grid import RULES_TAIL, domino_tiling, parse_grid

NAME = "dominosa"
TITLE = "Dominosa"
_STEP = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}
_BACK = {"U": "D", "D": "U", "L": "R", "R": "L"}


def _lay(rng: random.Random, top: int) -> dict[str, Any]:
    rows, cols = top + 1, top + 2
    tiles = domino_tiling(rng, rows, cols)
    pairs = [(a, b) for a in range(top + 1) for b in range(a, top + 1)]
    rng.shuffle(pairs)
    numbers = [[0] * cols for _ in range(rows)]
    solution = [[""] * cols for _ in range(rows)]
    for ((r, c), (r2, c2)), (a, b) in zip(tiles, pairs, strict=True):
        if rng.random() < 0.5:
            a, b = b, a
        numbers[r][c], numbers[r2][c2] = a, b
        solution[r][c], solution[r2][c2] = ("R", "L") if r2 == r else ("D", "U")
    return {"top": top, "rows": rows, "cols": cols, "numbers": numbers,
            "solution": ["".join(row) for row in solution]}  # fmt: skip


def _plain_cuts(rows: int, cols: int) -> list[str]:
    """The cuttings that need no thought: every domino across, or (an even number of rows) every one down."""
    out = ["\n".join(" ".join("RL" * (cols // 2)) for _ in range(rows))]
    if rows % 2 == 0:
        out.append("\n".join(" ".join(("D" if r % 2 == 0 else "U") * cols) for r in range(rows)))
    return out


def generate(rng: random.Random) -> dict[str, Any]:
    top = rng.choice((4, 5))
    while True:  # a layout that a plain cutting solves is laid again (about 1 in 250)
        case = _lay(rng, top)
        if not any(check(case, cut) for cut in _plain_cuts(case["rows"], case["cols"])):
            return case


def prompt(case: dict[str, Any]) -> str:
    rows, cols, top = case["rows"], case["cols"], case["top"]
    grid = "\n".join(" ".join(map(str, row)) for row in case["numbers"])
    count = (top + 1) * (top + 2) // 2
    return (
        f"Dominosa puzzle: a {rows}x{cols} grid of numbers from 0 to {top}. It is a full set of {count} dominoes "
        f"(every pair of numbers from 0 to {top}, doubles included, exactly once: 0-0, 0-1, ..., {top}-{top}) laid "
        "out with the borders between the dominoes erased.\n"
        "Cut the grid into dominoes (two cells that share a side) so that every cell is in exactly one domino "
        "and every pair of numbers appears on exactly one domino (a-b and b-a are the same pair).\n\n"
        f"Grid:\n{grid}\n\n"
        f"Answer: {rows} lines of {cols} cells; each cell is the direction of the other half of its domino: U (the "
        f"cell above), D (below), L (left) or R (right). {RULES_TAIL}"
    )


def answer(case: dict[str, Any]) -> str:
    return "\n".join(" ".join(row) for row in case["solution"])


def check(case: dict[str, Any], text: str) -> bool:
    rows, cols, numbers = case["rows"], case["cols"], case["numbers"]
    got = parse_grid(text, rows, cols, "UDLR")
    if got is None:
        return False
    pairs = set()
    for r in range(rows):
        for c in range(cols):
            dr, dc = _STEP[got[r][c]]
            r2, c2 = r + dr, c + dc
            if not (0 <= r2 < rows and 0 <= c2 < cols) or got[r2][c2] != _BACK[got[r][c]]:
                return False  # a partner off the grid, or one that does not point back
            pairs.add(tuple(sorted((numbers[r][c], numbers[r2][c2]))))
    return len(pairs) == rows * cols // 2  # as many different pairs as dominoes: each pair once
