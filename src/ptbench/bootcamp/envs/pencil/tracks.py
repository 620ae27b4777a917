"""Tracks (Train Tracks): lay one railway from the entrance on the left edge to the exit on the bottom
edge, through cells joined side to side, never crossing itself, with as many track cells in every row
and column as its clue says.

Cases: a 6x6 grid and a random self-avoiding path (a randomised depth-first walk) from a left-edge cell
to a bottom-edge cell, at least 12 cells long; the clues are its row and column counts, and 2 or 3 of
its pieces are shown. The answer is the grid of pieces `|`, `-`, `L`, `J`, `7`, `F` and `.`; the check
follows the track from the entrance (every piece joined to its neighbours, the exit reached, no other
track cells) and reads the counts and the shown pieces, so any valid railway scores.
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.bootcamp.envs.pencil._grid import RULES_TAIL, counts, parse_grid, render

NAME = "tracks"
TITLE = "Tracks (Train Tracks)"
SIZE = 6
STEP = {"N": (-1, 0), "S": (1, 0), "W": (0, -1), "E": (0, 1)}
OPPOSITE = {"N": "S", "S": "N", "W": "E", "E": "W"}
PIECES = {"|": "NS", "-": "EW", "L": "NE", "J": "NW", "7": "SW", "F": "SE"}
_PIECE_OF = {frozenset(ends): piece for piece, ends in PIECES.items()}


def _walk(rng: random.Random, size: int, start: int) -> list[tuple[int, int]] | None:
    """A random self-avoiding path from (start, 0) to a bottom-row cell, at least 2 * size cells long."""
    path, tried = [(start, 0)], [0]
    options: list[list[tuple[int, int]]] = [[]]

    def fresh(cell: tuple[int, int]) -> list[tuple[int, int]]:
        out = [(cell[0] + dr, cell[1] + dc) for dr, dc in STEP.values()]
        out = [p for p in out if 0 <= p[0] < size and 0 <= p[1] < size and p not in path]
        rng.shuffle(out)
        return out

    options[0] = fresh(path[0])
    steps = 0
    while path and steps < 5000:
        steps += 1
        if path[-1][0] == size - 1 and len(path) >= 2 * size:
            return path
        if tried[-1] < len(options[-1]):
            nxt = options[-1][tried[-1]]
            tried[-1] += 1
            if nxt not in path:
                path.append(nxt)
                options.append(fresh(nxt))
                tried.append(0)
        else:
            path.pop()
            options.pop()
            tried.pop()
    return None


def _track_counts(grid: list[str]) -> tuple[list[int], list[int]]:
    """How many track cells (anything but '.') each row and each column holds."""
    rows, cols = counts(grid, ".")
    return [len(grid[0]) - n for n in rows], [len(grid) - n for n in cols]


def _direction(a: tuple[int, int], b: tuple[int, int]) -> str:
    return next(d for d, (dr, dc) in STEP.items() if (a[0] + dr, a[1] + dc) == b)


def generate(rng: random.Random) -> dict[str, Any]:
    size = SIZE
    path = None
    while path is None:
        start = rng.randrange(size)
        path = _walk(rng, size, start)
    grid = [["."] * size for _ in range(size)]
    for k, cell in enumerate(path):
        back = "W" if k == 0 else _direction(cell, path[k - 1])
        ahead = "S" if k == len(path) - 1 else _direction(cell, path[k + 1])
        grid[cell[0]][cell[1]] = _PIECE_OF[frozenset(back + ahead)]
    solution = ["".join(row) for row in grid]
    shown = [["?"] * size for _ in range(size)]
    for r, c in rng.sample(path, rng.randint(2, 3)):
        shown[r][c] = solution[r][c]
    row_counts, col_counts = _track_counts(solution)
    return {"size": size, "entrance": path[0][0], "exit": path[-1][1], "shown": ["".join(row) for row in shown],
            "rows": row_counts, "cols": col_counts, "solution": solution}  # fmt: skip


def prompt(case: dict[str, Any]) -> str:
    size = case["size"]
    return (
        f"Tracks (Train Tracks) puzzle on a {size}x{size} grid. Lay one railway that enters the grid through the "
        f"left edge of row {case['entrance'] + 1} (from the left, into the cell at row {case['entrance'] + 1}, "
        f"column 1) and leaves it through the bottom edge of column {case['exit'] + 1} (out of the cell at row "
        f"{size}, column {case['exit'] + 1}). Each track cell holds one piece joining two of its sides:\n"
        "  | joins top and bottom, - joins left and right, L joins top and right, J joins top and left, "
        "7 joins bottom and left, F joins bottom and right.\n"
        "Rules:\n"
        "1. the pieces form one unbroken railway from the entrance to the exit: every piece is joined to the "
        "pieces beside it on both its sides (or to the entrance or exit), and there is no other track cell "
        "(no loops, no branches, no loose pieces);\n"
        "2. each row and each column holds exactly the number of track cells its clue gives;\n"
        "3. the pieces shown below are part of the railway as shown (? is unknown).\n\n"
        f"Grid:\n{render(case['shown'])}\n"
        f"Track cells per row, top to bottom: {' '.join(map(str, case['rows']))}\n"
        f"Track cells per column, left to right: {' '.join(map(str, case['cols']))}\n\n"
        f"Answer: the grid, {size} lines of {size} cells, each track cell as its piece (| - L J 7 F) and every "
        f"other cell as '.'. {RULES_TAIL}"
    )


def answer(case: dict[str, Any]) -> str:
    return render(case["solution"])


def check(case: dict[str, Any], text: str) -> bool:
    size = case["size"]
    got = parse_grid(text, size, size, "." + "".join(PIECES))
    if got is None:
        return False
    if any(
        s != "?" and s != g
        for row_s, row_g in zip(case["shown"], got, strict=True)
        for s, g in zip(row_s, row_g, strict=True)
    ):
        return False
    track = {(r, c) for r in range(size) for c in range(size) if got[r][c] != "."}
    cell, came = (case["entrance"], 0), "W"
    visited = set()
    while True:
        if cell not in track or cell in visited or came not in PIECES[got[cell[0]][cell[1]]]:
            return False  # the railway breaks off, crosses itself, or meets a piece that does not join it
        visited.add(cell)
        out = PIECES[got[cell[0]][cell[1]]].replace(came, "", 1)
        if cell == (size - 1, case["exit"]) and out == "S":
            break
        dr, dc = STEP[out]
        cell, came = (cell[0] + dr, cell[1] + dc), OPPOSITE[out]
    if visited != track:
        return False  # track cells off the railway (a loop or a loose piece)
    return _track_counts(got) == (case["rows"], case["cols"])
