"""Kurodoko (Range): shade some cells black so that no two black cells share a side, the white cells are
all connected, and each numbered cell (white) sees exactly that many white cells, itself included,
along its row and column up to the first black cell or the edge.

Cases: a 6x6 or 7x7 grid with black cells planted at random (none side by side, the white cells kept
connected); about two fifths of the white cells show how many cells they see. The answer is the grid,
`#` black and `.` white (numbered cells are white); the check reads the three rules, so any valid
shading scores.
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.bootcamp.envs.pencil._grid import RULES_TAIL, connected, neighbours, parse_grid, render

NAME = "kurodoko"
TITLE = "Kurodoko (Range)"
_DIRS = ((-1, 0), (1, 0), (0, -1), (0, 1))


def seen(grid: list[str], r: int, c: int) -> int:
    """How many white cells (r, c) sees, itself included."""
    size, total = len(grid), 1
    for dr, dc in _DIRS:
        nr, nc = r + dr, c + dc
        while 0 <= nr < size and 0 <= nc < size and grid[nr][nc] != "#":
            total += 1
            nr, nc = nr + dr, nc + dc
    return total


def generate(rng: random.Random) -> dict[str, Any]:
    size = rng.choice((6, 7))
    black: set[tuple[int, int]] = set()
    everything = {(r, c) for r in range(size) for c in range(size)}
    order = sorted(everything)
    rng.shuffle(order)
    for r, c in order[: size * size // 2]:
        if len(black) >= size * size // 5:
            break
        if any(n in black for n in neighbours(r, c, size, size)):
            continue
        if connected(everything - black - {(r, c)}):
            black.add((r, c))
    solution = ["".join("#" if (r, c) in black else "." for c in range(size)) for r in range(size)]
    whites = [p for p in sorted(everything - black)]
    numbered = set(rng.sample(whites, max(1, round(len(whites) * 0.4))))
    clues = [[seen(solution, r, c) if (r, c) in numbered else 0 for c in range(size)] for r in range(size)]
    return {"size": size, "clues": clues, "solution": solution}


def prompt(case: dict[str, Any]) -> str:
    size = case["size"]
    shown = "\n".join(" ".join(f"{v:>2}" if v else " ." for v in row) for row in case["clues"])
    return (
        f"Kurodoko (Range) puzzle on a {size}x{size} grid. Some cells hold a number; '.' is a cell without one.\n"
        "Shade some cells black so that:\n"
        "1. no two black cells share a side;\n"
        "2. all white (unshaded) cells form one group connected through shared sides;\n"
        "3. every numbered cell is white and sees exactly that many white cells, counting itself and every white "
        "cell in its row and column, in each direction up to the first black cell or the edge of the grid.\n\n"
        f"Puzzle:\n{shown}\n\n"
        f"Answer: the grid, {size} lines of {size} cells, # for a black cell and . for a white one (numbered cells "
        f"are white: write them as .). {RULES_TAIL}"
    )


def answer(case: dict[str, Any]) -> str:
    return render(case["solution"])


def check(case: dict[str, Any], text: str) -> bool:
    size, clues = case["size"], case["clues"]
    got = parse_grid(text, size, size, ".#")
    if got is None:
        return False
    black = {(r, c) for r in range(size) for c in range(size) if got[r][c] == "#"}
    if any(n in black for r, c in black for n in neighbours(r, c, size, size)):
        return False
    if not connected({(r, c) for r in range(size) for c in range(size)} - black):
        return False
    return all(
        (r, c) not in black and seen(got, r, c) == clues[r][c] for r in range(size) for c in range(size) if clues[r][c]
    )
