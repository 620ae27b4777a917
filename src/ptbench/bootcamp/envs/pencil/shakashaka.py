"""Shakashaka: put a black triangle (half a cell, cut along a diagonal) into some of the white cells so
that every white area (white cells and the white halves of triangle cells, joined through shared edges)
is a rectangle, upright or turned 45 degrees; a number on a black cell is how many triangles lie in the
cells beside it (up, down, left, right).

Cases: a 6x6 or 7x7 grid, all black at first; random upright rectangles (1 to 4 cells a side) and
turned rectangles (diamonds whose border cells are triangles) are carved out one at a time, each kept
only if the cells it touches are free and every white area is still a rectangle; a case has at least
two diamonds, and two thirds of the black cells show their number. A case that leaving every white cell
empty would solve is carved again. The answer writes each cell: # black (as in the puzzle), . empty, or
a triangle by the corner its black half fills, as on a numeric keypad: 7 top-left, 9 top-right, 1
bottom-left, 3 bottom-right. The check cuts each cell into four quarter triangles and tests every white
area for being its bounding box, upright or turned (by area), so any valid answer scores.
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.bootcamp.envs.pencil._grid import RULES_TAIL, neighbours, parse_grid, render

NAME = "shakashaka"
TITLE = "Shakashaka"
# the quarters (N, E, S, W) each cell mark leaves white
WHITE_QUARTERS = {".": "NESW", "#": "", "7": "ES", "9": "SW", "1": "NE", "3": "NW"}
_MARK_OF = {quarters: mark for mark, quarters in WHITE_QUARTERS.items()}
# each quarter's corners, doubled (x = 2 * column, y = 2 * row, the cell's centre at +1, +1)
_CORNERS = {"N": ((0, 0), (2, 0), (1, 1)), "E": ((2, 0), (2, 2), (1, 1)),
            "S": ((0, 2), (2, 2), (1, 1)), "W": ((0, 0), (0, 2), (1, 1))}  # fmt: skip
_ACROSS = {"N": (-1, 0, "S"), "S": (1, 0, "N"), "E": (0, 1, "W"), "W": (0, -1, "E")}
_WITHIN = {"N": "EW", "E": "NS", "S": "EW", "W": "NS"}

Quarter = tuple[int, int, str]


def _white(grid: list[str]) -> set[Quarter]:
    return {(r, c, q) for r, row in enumerate(grid) for c, mark in enumerate(row) for q in WHITE_QUARTERS[mark]}


def rectangles(grid: list[str]) -> bool:
    """Whether every white area of the grid (quarters joined through shared edges) is a rectangle, upright
    or turned 45 degrees: its area equals its bounding box's, in x/y or in the turned axes x+y, x-y."""
    white = _white(grid)
    seen: set[Quarter] = set()
    for start in sorted(white):
        if start in seen:
            continue
        seen.add(start)
        area, stack, points = 0, [start], []
        while stack:
            r, c, q = stack.pop()
            area += 1
            points += [(2 * c + x, 2 * r + y) for x, y in _CORNERS[q]]
            near = [(r, c, o) for o in _WITHIN[q]] + [(r + _ACROSS[q][0], c + _ACROSS[q][1], _ACROSS[q][2])]
            for n in near:
                if n in white and n not in seen:
                    seen.add(n)
                    stack.append(n)
        # a quarter is a quarter cell: 1 in doubled x/y units; in the turned axes (u, v) = (x+y, x-y) 2
        xs, ys = [p[0] for p in points], [p[1] for p in points]
        us, vs = [x + y for x, y in points], [x - y for x, y in points]
        upright = (max(xs) - min(xs)) * (max(ys) - min(ys)) == area
        turned = (max(us) - min(us)) * (max(vs) - min(vs)) == 2 * area
        if not (upright or turned):
            return False
    return True


def triangles_beside(grid: list[str], r: int, c: int) -> int:
    size = len(grid)
    return sum(grid[nr][nc] in "7913" for nr, nc in neighbours(r, c, size, size))


def _shape(rng: random.Random, size: int) -> tuple[bool, set[Quarter]]:
    """A random upright rectangle or diamond as the quarters it whitens (maybe partly off the grid)."""
    if rng.random() < 0.5:
        h, w = rng.randint(1, 4), rng.randint(1, 4)
        r0, c0 = rng.randrange(size), rng.randrange(size)
        return False, {(r, c, q) for r in range(r0, r0 + h) for c in range(c0, c0 + w) for q in "NESW"}
    du, dv = 2 * rng.randint(1, 2), 2 * rng.randint(1, 2)
    u0 = rng.randrange(-size, 2 * size)
    v0 = rng.randrange(-size, size) * 2 + u0 % 2  # u0 + v0 even: the corners on grid points
    out = set()
    for r in range(size):
        for c in range(size):
            if not (u0 - 1 < c + r + 1 < u0 + du + 1 and v0 - 1 < c - r < v0 + dv + 1):
                continue  # the cell's centre is too far from the box for any quarter to lie inside
            for q, corners in _CORNERS.items():
                cx, cy = (2 * c + sum(p[0] for p in corners) / 3) / 2, (2 * r + sum(p[1] for p in corners) / 3) / 2
                if u0 < cx + cy < u0 + du and v0 < cx - cy < v0 + dv:
                    out.add((r, c, q))
    return True, out


def _carve(rng: random.Random, size: int) -> list[str] | None:
    white: set[Quarter] = set()
    diamonds = 0
    for _ in range(120):
        diamond, shape = _shape(rng, size)
        cells = {(r, c) for r, c, _ in shape}
        if not shape or any(not (0 <= r < size and 0 <= c < size) for r, c in cells):
            continue
        if any((r, c, q) in white for r, c in cells for q in "NESW"):
            continue
        trial = white | shape
        marks = ["".join(q for q in "NESW" if (r, c, q) in trial) for r in range(size) for c in range(size)]
        if any(m not in _MARK_OF for m in marks):
            continue
        grid = ["".join(_MARK_OF[m] for m in marks[r * size : (r + 1) * size]) for r in range(size)]
        if rectangles(grid):
            white, diamonds = trial, diamonds + diamond
    if diamonds < 2:
        return None
    marks = ["".join(q for q in "NESW" if (r, c, q) in white) for r in range(size) for c in range(size)]
    return ["".join(_MARK_OF[m] for m in marks[r * size : (r + 1) * size]) for r in range(size)]


def generate(rng: random.Random) -> dict[str, Any]:
    size = rng.choice((6, 7))
    while True:
        solution = _carve(rng, size)
        if solution is None:
            continue
        black = [(r, c) for r in range(size) for c in range(size) if solution[r][c] == "#"]
        numbered = set(rng.sample(black, round(len(black) * 2 / 3)))
        clues = [[triangles_beside(solution, r, c) if (r, c) in numbered else -1 for c in range(size)]
                 for r in range(size)]  # fmt: skip
        black_rows = ["".join("#" if v == "#" else "." for v in row) for row in solution]
        case = {"size": size, "black": black_rows, "clues": clues, "solution": solution}
        if not check(case, render(black_rows)):
            return case


def prompt(case: dict[str, Any]) -> str:
    size = case["size"]
    shown = "\n".join(
        " ".join(str(v) if v >= 0 else case["black"][r][c] for c, v in enumerate(row))
        for r, row in enumerate(case["clues"])
    )
    return (
        f"Shakashaka puzzle on a {size}x{size} grid. # is a black cell, a digit is a black cell with a number, "
        "'.' is a white cell.\n"
        "Put a black triangle into some white cells: a triangle fills half the cell, cut along a diagonal, with "
        "its black half in one corner. Write it by that corner as on a numeric keypad: 7 black top-left half, "
        "9 black top-right half, 1 black bottom-left half, 3 black bottom-right half.\n"
        "Rules:\n"
        "1. every white area (white cells and the white halves of triangle cells, joined through shared edges) "
        "must be a rectangle, either upright or turned 45 degrees (a diamond);\n"
        "2. a number on a black cell is how many triangles lie in the cells directly above, below, left and "
        "right of it.\n\n"
        f"Puzzle:\n{shown}\n\n"
        f"Answer: the grid, {size} lines of {size} cells: every black cell as # (numbered ones too), every empty "
        f"white cell as '.', every triangle as 7, 9, 1 or 3. {RULES_TAIL}"
    )


def answer(case: dict[str, Any]) -> str:
    return render(case["solution"])


def check(case: dict[str, Any], text: str) -> bool:
    size = case["size"]
    got = parse_grid(text, size, size, "".join(WHITE_QUARTERS))
    if got is None:
        return False
    if any(
        (b == "#") != (g == "#")
        for brow, grow in zip(case["black"], got, strict=True)
        for b, g in zip(brow, grow, strict=True)
    ):
        return False  # a black cell moved, added or removed
    if any(
        v >= 0 and triangles_beside(got, r, c) != v for r, row in enumerate(case["clues"]) for c, v in enumerate(row)
    ):
        return False
    return rectangles(got)
