"""Helpers shared by the pencil families that pencil3 wrote (Signpost, Net, Kropki, ...): a strict
parser for grids of numbers (cells of more than one character), in the same spirit as `_grid.parse_grid`.
"""

from __future__ import annotations

import re

from ptbench.bootcamp.envs.pencil._grid import grid_lines

NumberGrid = list[list[int]]
_NUMBER = re.compile(r"(0|[1-9][0-9]*)")

DIRS8 = {"N": (-1, 0), "NE": (-1, 1), "E": (0, 1), "SE": (1, 1), "S": (1, 0), "SW": (1, -1), "W": (0, -1),
         "NW": (-1, -1)}  # fmt: skip


def parse_numbers(text: str, rows: int, cols: int, low: int, high: int) -> NumberGrid | None:
    """The rows x cols grid of whole numbers in [low, high] that `text` holds, cells separated by single
    spaces, one line a row (a surrounding ``` fence and blank lines around it are tolerated); None if
    it holds anything else (a wrong shape, a number out of range, a sign, prose, two grids)."""
    lines = grid_lines(text, rows)
    if lines is None:
        return None
    grid = []
    for line in lines:
        tokens = line.split()
        if len(tokens) != cols or line != " ".join(tokens) or not all(_NUMBER.fullmatch(t) for t in tokens):
            return None
        values = [int(t) for t in tokens]
        if any(v < low or v > high for v in values):
            return None
        grid.append(values)
    return grid


def render_numbers(grid: NumberGrid) -> str:
    """A number grid as the answer format writes it: one line a row, numbers separated by single spaces."""
    return "\n".join(" ".join(str(v) for v in row) for row in grid)
