"""Easy As ABC: every row and column holds each letter once (the other cells blank); a clue outside the
grid names the first letter seen from that side."""

from __future__ import annotations

import itertools
import random

from ptbench.bootcamp.envs.pencil._regions import parse_grid, render

NAME = "easy_as_abc"
TITLE = "Easy As ABC"
_SHAPES = ((5, "ABC"), (5, "ABCD"), (6, "ABCD"))


def first_letter(line: list[str] | str) -> str:
    return next((x for x in line if x != "."), ".")


def edge_clues(grid: list[str]) -> dict[str, list[str]]:
    """The first letter seen from each side: top and bottom per column, left and right per row."""
    n = len(grid)
    cols = ["".join(grid[r][c] for r in range(n)) for c in range(n)]
    return {
        "top": [first_letter(col) for col in cols],
        "bottom": [first_letter(col[::-1]) for col in cols],
        "left": [first_letter(row) for row in grid],
        "right": [first_letter(row[::-1]) for row in grid],
    }


def _fill(rng: random.Random, n: int, letters: str) -> list[str]:
    rows = sorted(set(itertools.permutations(letters + "." * (n - len(letters)))))
    grid: list[tuple[str, ...]] = []

    def place() -> bool:
        if len(grid) == n:
            return True
        options = [
            row
            for row in rows
            if all(x == "." or all(g[c] != x for g in grid) for c, x in enumerate(row))
            and all(sum(g[c] == "." for g in grid) + (row[c] == ".") <= n - len(letters) for c in range(n))
        ]
        rng.shuffle(options)
        for row in options:
            grid.append(row)
            if place():
                return True
            grid.pop()
        return False

    place()
    return ["".join(row) for row in grid]


def generate(rng: random.Random) -> dict:
    """Plant a random filled grid, read the four sides' clues off it and hide about a quarter of them."""
    n, letters = rng.choice(_SHAPES)
    solution = _fill(rng, n, letters)
    clues = {side: [x if rng.random() < 0.75 else "-" for x in line] for side, line in edge_clues(solution).items()}
    return {"size": n, "letters": letters, "clues": clues, "solution": solution}


def prompt(case: dict) -> str:
    n, letters = case["size"], case["letters"]
    cl = case["clues"]
    blanks = n - len(letters)
    return (
        f"Solve this Easy As ABC puzzle. Fill a {n}x{n} grid so that every row and every column contains "
        f"each of the letters {', '.join(letters)} exactly once, and {blanks} blank "
        f"cell{'s' if blanks != 1 else ''}. A clue outside the grid names the first letter met when "
        "looking into the grid from that side (blank cells are skipped); '-' means no clue.\n\n"
        f"Top clues (columns left to right): {' '.join(cl['top'])}\n"
        f"Bottom clues (columns left to right): {' '.join(cl['bottom'])}\n"
        f"Left clues (rows top to bottom): {' '.join(cl['left'])}\n"
        f"Right clues (rows top to bottom): {' '.join(cl['right'])}\n\n"
        "Write the solved grid inside <answer></answer>: one line per row, one character per cell, a "
        "letter or '.' for a blank cell (spaces between cells are allowed). Write exactly one grid and "
        "nothing else inside the tags."
    )


def answer(case: dict) -> str:
    return render(case["solution"])


def check(case: dict, text: str) -> bool:
    n, letters = case["size"], case["letters"]
    grid = parse_grid(text, n, n, letters + ".")
    if grid is None:
        return False
    rows = ["".join(row) for row in grid]
    cols = ["".join(row[c] for row in rows) for c in range(n)]
    want = sorted(letters + "." * (n - len(letters)))
    if any(sorted(line) != want for line in rows + cols):
        return False
    seen = edge_clues(rows)
    return all(
        clue == "-" or clue == got
        for side, line in case["clues"].items()
        for clue, got in zip(line, seen[side], strict=True)
    )
