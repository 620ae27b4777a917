"""Magnets: each domino of the grid is a magnet (one `+` end, one `-` end) or blank; no two equal signs
share a side; every row and column holds as many `+` and `-` as its clues say.

Cases: a 6x6 grid tiled with random dominoes; each domino, in random order, becomes a magnet of a random
way round (the other way, or blank, where that would put equal signs side by side) or, one time in four,
blank; the clues are the planted signs' counts. The answer is the grid of `+`, `-` and `.`; the check
reads each domino, each pair of neighbours and the four count lists, so any valid layout scores.
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.bootcamp.envs.pencil._grid import (
    LABELS,
    RULES_TAIL,
    counts,
    domino_tiling,
    neighbours,
    parse_grid,
    render,
)

NAME = "magnets"
TITLE = "Magnets"
SIZE = 6


def generate(rng: random.Random) -> dict[str, Any]:
    size = SIZE
    tiles = domino_tiling(rng, size, size)
    signs = [["."] * size for _ in range(size)]
    order = list(range(len(tiles)))
    rng.shuffle(order)
    for k in order:
        if rng.random() < 0.25:
            continue
        (a, b), (c, d) = tiles[k]
        first = rng.choice(("+-", "-+"))
        for pair in (first, first[::-1]):
            signs[a][b], signs[c][d] = pair[0], pair[1]
            if not any(
                signs[n[0]][n[1]] == signs[r][q] for r, q in ((a, b), (c, d)) for n in neighbours(r, q, size, size)
            ):
                break
        else:
            signs[a][b] = signs[c][d] = "."
    solution = ["".join(row) for row in signs]
    layout = [[""] * size for _ in range(size)]
    for k, ((a, b), (c, d)) in enumerate(tiles):
        layout[a][b] = layout[c][d] = LABELS[k]
    plus, minus = counts(solution, "+"), counts(solution, "-")
    return {"size": size, "dominoes": ["".join(row) for row in layout], "plus_rows": plus[0], "plus_cols": plus[1],
            "minus_rows": minus[0], "minus_cols": minus[1], "solution": solution}  # fmt: skip


def prompt(case: dict[str, Any]) -> str:
    size = case["size"]

    def line(key: str) -> str:
        return " ".join(map(str, case[key]))

    return (
        f"Magnets puzzle on a {size}x{size} grid. The grid is tiled with dominoes; below, each cell shows the letter "
        "of its domino (the two cells with the same letter are one domino).\n"
        "Make every domino either a magnet, one end + and the other end -, or blank (both cells empty), so that:\n"
        "1. no two cells that share a side both hold + or both hold -;\n"
        "2. each row and each column holds exactly the number of + and of - its clues give.\n\n"
        f"Dominoes:\n{render(case['dominoes'])}\n"
        f"+ per row, top to bottom: {line('plus_rows')}\n"
        f"- per row, top to bottom: {line('minus_rows')}\n"
        f"+ per column, left to right: {line('plus_cols')}\n"
        f"- per column, left to right: {line('minus_cols')}\n\n"
        f"Answer: the grid, {size} lines of {size} cells, each +, - or . (empty). {RULES_TAIL}"
    )


def answer(case: dict[str, Any]) -> str:
    return render(case["solution"])


def check(case: dict[str, Any], text: str) -> bool:
    size, layout = case["size"], case["dominoes"]
    got = parse_grid(text, size, size, "+-.")
    if got is None:
        return False
    halves: dict[str, list[str]] = {}
    for r in range(size):
        for c in range(size):
            halves.setdefault(layout[r][c], []).append(got[r][c])
            if got[r][c] != "." and any(got[a][b] == got[r][c] for a, b in neighbours(r, c, size, size)):
                return False  # equal signs side by side
    if any(sorted(pair) not in (["+", "-"], [".", "."]) for pair in halves.values()):
        return False  # half a magnet, or a magnet with equal ends
    plus, minus = counts(got, "+"), counts(got, "-")
    return (plus[0], plus[1], minus[0], minus[1]) == (
        case["plus_rows"],
        case["plus_cols"],
        case["minus_rows"],
        case["minus_cols"],
    )
