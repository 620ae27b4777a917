"""Thermometers: fill each thermometer from its bulb, without gaps, so that every row and column holds
as many filled cells as its clue says.

Cases: a 5x5 or 6x6 grid cut into straight thermometers of 1 to 4 cells (a bulb at a random end), each
filled to a random level; the clues are the planted filling's row and column counts. The answer is the
grid, `#` filled and `.` empty; the check reads each thermometer (filled cells a prefix from its bulb)
and the counts, so any valid filling scores.
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.bootcamp.envs.pencil._grid import RULES_TAIL, cell_name, counts, parse_grid, render

NAME = "thermometers"
TITLE = "Thermometers"


def generate(rng: random.Random) -> dict[str, Any]:
    size = rng.choice((5, 6))
    owner = [[-1] * size for _ in range(size)]
    thermos: list[list[list[int]]] = []
    for r in range(size):
        for c in range(size):
            if owner[r][c] != -1:
                continue
            right = 0
            while c + right < size and owner[r][c + right] == -1 and right < 4:
                right += 1
            down = 0
            while r + down < size and owner[r + down][c] == -1 and down < 4:
                down += 1
            horizontal = rng.random() < 0.5 if right > 1 and down > 1 else right >= down
            most = right if horizontal else down
            length = rng.randint(min(2, most), most)
            cells = [[r, c + k] if horizontal else [r + k, c] for k in range(length)]
            if rng.random() < 0.5:
                cells.reverse()  # the bulb at the other end
            for cr, cc in cells:
                owner[cr][cc] = len(thermos)
            thermos.append(cells)
    fill = [["."] * size for _ in range(size)]
    for cells in thermos:
        for cr, cc in cells[: rng.randint(0, len(cells))]:
            fill[cr][cc] = "#"
    solution = ["".join(row) for row in fill]
    row_counts, col_counts = counts(solution, "#")
    return {"size": size, "thermometers": thermos, "rows": row_counts, "cols": col_counts, "solution": solution}


def prompt(case: dict[str, Any]) -> str:
    size = case["size"]
    listing = "\n".join(
        f"  T{k + 1}: " + " ".join(cell_name(r, c) for r, c in cells) for k, cells in enumerate(case["thermometers"])
    )
    return (
        f"Thermometers puzzle on a {size}x{size} grid (cells named (row,col), rows numbered 1-{size} from the top, "
        f"columns 1-{size} from the left). The grid is cut into thermometers, each a straight line of cells listed "
        "from its bulb to its tip.\n"
        "Fill some cells so that:\n"
        "1. every thermometer is filled from its bulb without gaps: if a cell is filled, every cell between it "
        "and the bulb is filled (a thermometer may be empty or completely full);\n"
        "2. each row and each column holds exactly the number of filled cells its clue gives.\n\n"
        f"Thermometers (bulb first):\n{listing}\n"
        f"Filled cells per row, top to bottom: {' '.join(map(str, case['rows']))}\n"
        f"Filled cells per column, left to right: {' '.join(map(str, case['cols']))}\n\n"
        f"Answer: the grid, {size} lines of {size} cells, # for a filled cell and . for an empty one. {RULES_TAIL}"
    )


def answer(case: dict[str, Any]) -> str:
    return render(case["solution"])


def check(case: dict[str, Any], text: str) -> bool:
    size = case["size"]
    got = parse_grid(text, size, size, ".#")
    if got is None:
        return False
    for cells in case["thermometers"]:
        states = [got[r][c] == "#" for r, c in cells]
        if any(later and not earlier for earlier, later in zip(states, states[1:], strict=False)):
            return False  # a filled cell beyond an empty one
    return counts(got, "#") == (case["rows"], case["cols"])
