"""Signpost: number the cells 1 to N (each once) so that every cell's arrow points towards the cell that
holds the next number: that cell lies in the arrow's direction (along a row, column or diagonal), at
any distance. The last number's cell has no arrow; some numbers are shown.

Cases: a 4x4 or 5x5 grid and a random path through every cell, each step a queen's move (a randomised
depth-first walk); each cell's arrow is the direction of its step, the first and last numbers and about
a fifth of the others are shown. The answer is the grid of numbers; the check reads that they are 1 to N
once each, keep the shown numbers, and that each number's successor lies along its cell's arrow, so any
valid numbering scores.
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.bootcamp.envs.pencil._paths3 import DIRS8, parse_numbers, render_numbers

NAME = "signpost"
TITLE = "Signpost"


def _step(a: tuple[int, int], b: tuple[int, int]) -> str | None:
    """The arrow from a to b if b lies along one of the eight directions from a, else None."""
    dr, dc = b[0] - a[0], b[1] - a[1]
    if (dr, dc) == (0, 0) or not (dr == 0 or dc == 0 or abs(dr) == abs(dc)):
        return None
    unit = ((dr > 0) - (dr < 0), (dc > 0) - (dc < 0))
    return next(name for name, d in DIRS8.items() if d == unit)


def _path(rng: random.Random, size: int) -> list[tuple[int, int]] | None:
    cells = [(r, c) for r in range(size) for c in range(size)]
    path = [rng.choice(cells)]
    used = set(path)
    options = [[p for p in cells if p not in used and _step(path[0], p)]]
    rng.shuffle(options[0])
    steps = 0
    while len(path) < len(cells):
        steps += 1
        if steps > 20000 or not path:
            return None
        if options[-1]:
            nxt = options[-1].pop()
            path.append(nxt)
            used.add(nxt)
            fresh = [p for p in cells if p not in used and _step(nxt, p)]
            rng.shuffle(fresh)
            options.append(fresh)
        else:
            used.discard(path.pop())
            options.pop()
    return path


def generate(rng: random.Random) -> dict[str, Any]:
    size = rng.choice((4, 5))
    path = None
    while path is None:
        path = _path(rng, size)
    total = size * size
    arrows = [["*"] * size for _ in range(size)]
    solution = [[0] * size for _ in range(size)]
    for k, (r, c) in enumerate(path):
        solution[r][c] = k + 1
        if k + 1 < total:
            arrows[r][c] = _step((r, c), path[k + 1]) or "*"
    shown_k = {0, total - 1} | set(rng.sample(range(1, total - 1), round(total / 5)))
    shown = [[0] * size for _ in range(size)]
    for k in shown_k:
        r, c = path[k]
        shown[r][c] = k + 1
    return {"size": size, "arrows": arrows, "shown": shown, "solution": solution}


def prompt(case: dict[str, Any]) -> str:
    size = case["size"]
    total = size * size
    cells = "\n".join(
        " ".join(f"{(str(v) if v else '?'):>2}/{a:<2}" for v, a in zip(vals, arr, strict=True)).rstrip()
        for vals, arr in zip(case["shown"], case["arrows"], strict=True)
    )
    return (
        f"Signpost puzzle on a {size}x{size} grid. Each cell is written as number/arrow: the number is shown or "
        f"? (unknown), the arrow is one of N, NE, E, SE, S, SW, W, NW (N is up, E is right), and * marks the cell "
        "without an arrow.\n"
        f"Write a number from 1 to {total} in every cell so that:\n"
        f"1. every number from 1 to {total} is used exactly once;\n"
        "2. the shown numbers stay where they are;\n"
        f"3. for every number k below {total}, the cell holding k+1 lies in the direction of k's arrow from k's "
        "cell (in a straight line along that row, column or diagonal, at any distance, other cells may lie in "
        f"between); the cell marked * holds {total}.\n\n"
        f"Puzzle:\n{cells}\n\n"
        f"Answer: the grid of numbers, {size} lines of {size} numbers. Give your complete solution once, inside "
        "<answer></answer> tags, in exactly this format and nothing else inside the tags: one line per row, the "
        "row's numbers separated by single spaces."
    )


def answer(case: dict[str, Any]) -> str:
    return render_numbers(case["solution"])


def check(case: dict[str, Any], text: str) -> bool:
    size = case["size"]
    total = size * size
    got = parse_numbers(text, size, size, 1, total)
    if got is None:
        return False
    where = {got[r][c]: (r, c) for r in range(size) for c in range(size)}
    if len(where) != total:
        return False  # a number used twice (so another missing)
    if any(
        s and s != g for srow, grow in zip(case["shown"], got, strict=True) for s, g in zip(srow, grow, strict=True)
    ):
        return False
    r, c = where[total]
    if case["arrows"][r][c] != "*":
        return False
    for k in range(1, total):
        (r, c), nxt = where[k], where[k + 1]
        if _step((r, c), nxt) != case["arrows"][r][c]:
            return False
    return True
