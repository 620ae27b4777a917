"""Sashigane: divide the grid into L shapes (a corner cell with one straight arm of width 1 going up or
down and one going left or right, each at least one cell beyond the corner), so that every circle is the
corner of its L, a number in a circle is the size of its L, every arrow lies at the end of an arm and
points along it towards the corner, and no L holds two circles.

Cases: a 6x6 grid tiled with L shapes of at most 7 cells by a randomised backtracking search (the first
free cell in reading order takes a random L that fits); each L shows one clue: its corner circled with
its size (half the time), its corner circled (a fifth) or an arrow at one arm's end. The answer is the
grid, each cell the letter of its L; the check reads the regions off the letters and the rules, so any
valid division scores.
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.bootcamp.envs.pencil._grid import RULES_TAIL, render
from ptbench.bootcamp.envs.pencil._shapes4 import parse_regions, region_answer

NAME = "sashigane"
TITLE = "Sashigane"
SIZE = 6
Cell = tuple[int, int]
ARROW = {(-1, 0): "^", (1, 0): "v", (0, -1): "<", (0, 1): ">"}  # the way an arrow points


def _shapes(size: int) -> list[tuple[Cell, list[Cell], list[Cell]]]:
    """Every L on the grid: its corner, its upright arm and its level arm (each from the corner outwards)."""
    out = []
    for r in range(size):
        for c in range(size):
            for dv in (-1, 1):
                for dh in (-1, 1):
                    for a in range(1, size):
                        for b in range(1, size):
                            if 1 + a + b > 7 or not (0 <= r + dv * a < size and 0 <= c + dh * b < size):
                                continue
                            out.append(((r, c), [(r + dv * i, c) for i in range(1, a + 1)],
                                        [(r, c + dh * i) for i in range(1, b + 1)]))  # fmt: skip
    return out


def read_l(cells: list[Cell]) -> tuple[Cell, list[Cell], list[Cell]] | None:
    """The corner and the two arms of a region that is an L; None for any other shape."""
    group = set(cells)
    for r, c in cells:
        ups = [d for d in (-1, 1) if (r + d, c) in group]
        sides = [d for d in (-1, 1) if (r, c + d) in group]
        if len(ups) != 1 or len(sides) != 1:
            continue
        upright, level = [], []
        k = 1
        while (r + ups[0] * k, c) in group:
            upright.append((r + ups[0] * k, c))
            k += 1
        k = 1
        while (r, c + sides[0] * k) in group:
            level.append((r, c + sides[0] * k))
            k += 1
        if 1 + len(upright) + len(level) == len(group):
            return (r, c), upright, level
    return None


def _tile(rng: random.Random, size: int) -> list[tuple[Cell, list[Cell], list[Cell]]] | None:
    shapes = _shapes(size)
    by_first: dict[Cell, list[tuple[Cell, list[Cell], list[Cell]]]] = {}
    for shape in shapes:
        by_first.setdefault(min([shape[0], *shape[1], *shape[2]]), []).append(shape)
    taken: set[Cell] = set()
    chosen: list[tuple[Cell, list[Cell], list[Cell]]] = []
    budget = [3000]

    def place() -> bool:
        free = next(((r, c) for r in range(size) for c in range(size) if (r, c) not in taken), None)
        if free is None:
            return True
        budget[0] -= 1
        if budget[0] < 0:
            return False
        options = [s for s in by_first.get(free, []) if not any(p in taken for p in [s[0], *s[1], *s[2]])]
        rng.shuffle(options)
        for shape in options:
            cells = [shape[0], *shape[1], *shape[2]]
            taken.update(cells)
            chosen.append(shape)
            if place():
                return True
            taken.difference_update(cells)
            chosen.pop()
        return False

    return chosen if place() else None


def generate(rng: random.Random) -> dict[str, Any]:
    size = SIZE
    tiling = None
    while tiling is None:
        tiling = _tile(rng, size)
    clues = [["."] * size for _ in range(size)]
    for corner, upright, level in tiling:
        roll = rng.random()
        if roll < 0.5:
            clues[corner[0]][corner[1]] = str(1 + len(upright) + len(level))
        elif roll < 0.7:
            clues[corner[0]][corner[1]] = "o"
        else:
            arm = rng.choice((upright, level))
            (r, c), (pr, pc) = arm[-1], arm[-2] if len(arm) > 1 else corner
            clues[r][c] = ARROW[(pr - r, pc - c)]
    solution = region_answer([[corner, *upright, *level] for corner, upright, level in tiling], size, size)
    return {"size": size, "clues": ["".join(row) for row in clues], "solution": solution}


def prompt(case: dict[str, Any]) -> str:
    size = case["size"]
    return (
        f"Sashigane puzzle on a {size}x{size} grid. In the grid below, o is a circle, a digit is a circle with "
        "that number, ^ v < > are arrows (pointing up, down, left, right), and '.' is a plain cell.\n"
        "Divide the whole grid into L shapes: each L is a corner cell with one straight arm (one cell wide) going "
        "up or down from it and one going left or right, each arm at least one cell long. Also:\n"
        "1. every circle is the corner of its L, and no L holds two circles;\n"
        "2. a number in a circle is how many cells its L has;\n"
        "3. every arrow lies in the last cell of an arm of its L and points along that arm towards the corner.\n\n"
        f"Puzzle:\n{render(case['clues'])}\n\n"
        f"Answer: the grid, {size} lines of {size} cells, each cell the letter (A-Z, a-z) of its L: cells of one L "
        f"share a letter and different Ls have different letters. {RULES_TAIL}"
    )


def answer(case: dict[str, Any]) -> str:
    return render(case["solution"])


def check(case: dict[str, Any], text: str) -> bool:
    size, clues = case["size"], case["clues"]
    regions = parse_regions(text, size, size)
    if regions is None:
        return False
    for cells in regions:
        shape = read_l(cells)
        if shape is None:
            return False
        corner, upright, level = shape
        circles = [(r, c) for r, c in cells if clues[r][c] == "o" or clues[r][c].isdigit()]
        if circles and circles != [corner]:
            return False
        if clues[corner[0]][corner[1]].isdigit() and int(clues[corner[0]][corner[1]]) != len(cells):
            return False
        for r, c in cells:
            if clues[r][c] in "^v<>":
                arm = next((arm for arm in (upright, level) if arm[-1] == (r, c)), None)
                if arm is None:
                    return False  # an arrow that is not at an arm's end
                pr, pc = arm[-2] if len(arm) > 1 else corner
                if ARROW[(pr - r, pc - c)] != clues[r][c]:
                    return False
    return True
