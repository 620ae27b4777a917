"""Undead: fill every empty cell of a grid of diagonal mirrors with a ghost (G), a vampire (V) or a zombie
(Z), with as many of each as given, so that each number around the edge is how many monsters one sees
looking into the grid from there. The line of sight bounces off the mirrors; a vampire is seen only
directly (before the line has met a mirror), a ghost only in a mirror (after it has bounced at least
once), a zombie always; a monster passed twice is counted twice.

Cases: a 4x4 or 5x5 grid with a quarter to a third of the cells mirrors (/ or \\ at random) and a random
monster in every other cell (each kind at least once); every edge clue is shown. The answer is the grid
of G, V, Z with every mirror cell written as '.'; the check counts the monsters and traces each line of
sight, so any valid filling scores.
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.bootcamp.envs.pencil._grid import RULES_TAIL, parse_grid, render

NAME = "undead"
TITLE = "Undead"
MONSTERS = "GVZ"


def sight(grid: list[str], mirrors: list[str], r: int, c: int, dr: int, dc: int) -> int:
    """How many monsters one sees entering the grid at (r, c) heading (dr, dc)."""
    size, seen, bounced = len(grid), 0, False
    while 0 <= r < size and 0 <= c < size:
        m = mirrors[r][c]
        if m == "/":
            dr, dc, bounced = -dc, -dr, True
        elif m == "\\":
            dr, dc, bounced = dc, dr, True
        else:
            kind = grid[r][c]
            seen += kind == "Z" or (kind == "V" and not bounced) or (kind == "G" and bounced)
        r, c = r + dr, c + dc
    return seen


def edge_clues(grid: list[str], mirrors: list[str]) -> dict[str, list[int]]:
    size = len(grid)
    return {
        "top": [sight(grid, mirrors, 0, k, 1, 0) for k in range(size)],
        "bottom": [sight(grid, mirrors, size - 1, k, -1, 0) for k in range(size)],
        "left": [sight(grid, mirrors, k, 0, 0, 1) for k in range(size)],
        "right": [sight(grid, mirrors, k, size - 1, 0, -1) for k in range(size)],
    }


def generate(rng: random.Random) -> dict[str, Any]:
    size = rng.choice((4, 5))
    while True:
        cells = [(r, c) for r in range(size) for c in range(size)]
        placed = {p: rng.choice("/\\") for p in rng.sample(cells, round(len(cells) * rng.uniform(0.25, 0.34)))}
        mirrors = ["".join(placed.get((r, c), ".") for c in range(size)) for r in range(size)]
        solution = ["".join("." if m != "." else rng.choice(MONSTERS) for m in row) for row in mirrors]
        if all(any(kind in row for row in solution) for kind in MONSTERS):
            break
    totals = {kind: sum(row.count(kind) for row in solution) for kind in MONSTERS}
    return {"size": size, "mirrors": mirrors, "totals": totals, **edge_clues(solution, mirrors),
            "solution": solution}  # fmt: skip


def prompt(case: dict[str, Any]) -> str:
    size, t = case["size"], case["totals"]
    shown = render(["".join("?" if m == "." else m for m in row) for row in case["mirrors"]])
    return (
        f"Undead puzzle on a {size}x{size} grid. Cells marked / or \\ hold a two-sided diagonal mirror; every cell "
        "marked ? holds one monster: a ghost (G), a vampire (V) or a zombie (Z).\n"
        "Rules:\n"
        f"1. there are exactly {t['G']} ghosts, {t['V']} vampires and {t['Z']} zombies;\n"
        "2. each number around the edge is how many monsters are seen looking into the grid from that position, "
        "straight along the row or column; the line of sight is reflected by every mirror it meets (/ sends a "
        "line heading right upwards, \\ sends a line heading right downwards, and so on) until it leaves the "
        "grid;\n"
        "3. a vampire is seen only directly (before the line of sight has met any mirror), a ghost only in a "
        "mirror (after the line has been reflected at least once), a zombie always; a monster the line passes "
        "twice is counted twice.\n\n"
        f"Grid:\n{shown}\n"
        f"Looking down from the top, columns left to right: {' '.join(map(str, case['top']))}\n"
        f"Looking up from the bottom, columns left to right: {' '.join(map(str, case['bottom']))}\n"
        f"Looking right from the left edge, rows top to bottom: {' '.join(map(str, case['left']))}\n"
        f"Looking left from the right edge, rows top to bottom: {' '.join(map(str, case['right']))}\n\n"
        f"Answer: the grid, {size} lines of {size} cells, each ? cell as G, V or Z and each mirror cell as '.'. "
        f"{RULES_TAIL}"
    )


def answer(case: dict[str, Any]) -> str:
    return render(case["solution"])


def check(case: dict[str, Any], text: str) -> bool:
    size, mirrors = case["size"], case["mirrors"]
    got = parse_grid(text, size, size, "." + MONSTERS)
    if got is None:
        return False
    if any(
        (m == ".") != (g != ".")
        for mrow, grow in zip(mirrors, got, strict=True)
        for m, g in zip(mrow, grow, strict=True)
    ):
        return False  # a monster on a mirror, or an empty cell left without one
    if any(sum(row.count(kind) for row in got) != n for kind, n in case["totals"].items()):
        return False
    clues = edge_clues(got, mirrors)
    return all(clues[side] == case[side] for side in ("top", "bottom", "left", "right"))
