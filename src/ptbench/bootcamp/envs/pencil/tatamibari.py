"""Tatamibari: divide the grid into rectangles so that every rectangle holds exactly one symbol, `+` in a
square, `-` in a rectangle wider than tall, `|` in one taller than wide, and no four rectangles meet at
one point.

Cases: a 6x6 or 7x7 grid tiled at random (each free cell, in reading order, starts a random rectangle of at
most 6 cells over free cells; a tiling where four rectangles meet is laid again); each rectangle shows
its symbol in a random cell. The answer is the grid, each cell the letter of its rectangle; the check
reads the regions off the letters and the rules, so any valid division scores.
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.bootcamp.envs.pencil._grid import LABELS, RULES_TAIL, render
from ptbench.bootcamp.envs.pencil._shapes4 import parse_regions

NAME = "tatamibari"
TITLE = "Tatamibari"


def symbol(cells: list[tuple[int, int]]) -> str | None:
    """The symbol a region calls for: '+', '-' or '|' for a rectangle, None for any other shape."""
    rows = {r for r, _ in cells}
    cols = {c for _, c in cells}
    height, width = max(rows) - min(rows) + 1, max(cols) - min(cols) + 1
    if height * width != len(cells):
        return None
    return "+" if height == width else "-" if width > height else "|"


def _four_meet(owner: list[list[int]] | list[str], size: int) -> bool:
    return any(
        len({owner[r - 1][c - 1], owner[r - 1][c], owner[r][c - 1], owner[r][c]}) == 4
        for r in range(1, size)
        for c in range(1, size)
    )


def _tiling(rng: random.Random, size: int) -> list[list[int]]:
    while True:
        owner = [[-1] * size for _ in range(size)]
        count = 0
        for r in range(size):
            for c in range(size):
                if owner[r][c] != -1:
                    continue
                width = 0
                while c + width < size and owner[r][c + width] == -1:
                    width += 1
                shapes = [(h, w) for h in range(1, size - r + 1) for w in range(1, width + 1) if h * w <= 6]
                h, w = rng.choice(shapes)
                for dr in range(h):
                    for dc in range(w):
                        owner[r + dr][c + dc] = count
                count += 1
        if not _four_meet(owner, size):
            return owner


def generate(rng: random.Random) -> dict[str, Any]:
    size = rng.choice((6, 7))
    owner = _tiling(rng, size)
    clues = [["."] * size for _ in range(size)]
    for k in range(max(map(max, owner)) + 1):
        cells = [(r, c) for r in range(size) for c in range(size) if owner[r][c] == k]
        r, c = rng.choice(cells)
        clues[r][c] = symbol(cells) or "?"
    solution = ["".join(LABELS[k] for k in row) for row in owner]
    return {"size": size, "clues": ["".join(row) for row in clues], "solution": solution}


def prompt(case: dict[str, Any]) -> str:
    size = case["size"]
    return (
        f"Tatamibari puzzle on a {size}x{size} grid. Some cells hold a symbol (+, - or |); '.' is a cell without "
        "one.\nDivide the whole grid into rectangles so that:\n"
        "1. every rectangle holds exactly one symbol;\n"
        "2. a rectangle with + is a square, one with - is wider than tall, one with | is taller than wide;\n"
        "3. no four rectangles meet at one point (no grid point is a corner of four rectangles).\n\n"
        f"Puzzle:\n{render(case['clues'])}\n\n"
        f"Answer: the grid, {size} lines of {size} cells, each cell the letter (A-Z, a-z) of its rectangle: cells "
        "of one rectangle share a letter and different rectangles have different letters. "
        f"{RULES_TAIL}"
    )


def answer(case: dict[str, Any]) -> str:
    return render(case["solution"])


def check(case: dict[str, Any], text: str) -> bool:
    size, clues = case["size"], case["clues"]
    regions = parse_regions(text, size, size)
    if regions is None:
        return False
    owner = [[0] * size for _ in range(size)]
    for k, cells in enumerate(regions):
        symbols = [clues[r][c] for r, c in cells if clues[r][c] != "."]
        if len(symbols) != 1 or symbol(cells) != symbols[0]:
            return False
        for r, c in cells:
            owner[r][c] = k
    return not _four_meet(owner, size)
