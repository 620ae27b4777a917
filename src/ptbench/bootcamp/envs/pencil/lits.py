"""LITS: shade one tetromino in every region; the shading is connected, has no 2x2 block, and two
tetrominoes of the same shape never touch along an edge."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil._regions import (
    SHADE_FORMAT,
    Cell,
    connected,
    grow_regions,
    has_2x2,
    label_grid,
    parse_grid,
    region_cells,
    render,
    shaded,
)

NAME = "lits"
TITLE = "LITS"
SIZE = 6

_BASE = {
    "L": ((0, 0), (1, 0), (2, 0), (2, 1)),
    "I": ((0, 0), (1, 0), (2, 0), (3, 0)),
    "T": ((0, 0), (0, 1), (0, 2), (1, 1)),
    "S": ((0, 1), (0, 2), (1, 0), (1, 1)),
}


def _normal(cells: frozenset[Cell] | set[Cell]) -> frozenset[Cell]:
    r0 = min(r for r, _ in cells)
    c0 = min(c for _, c in cells)
    return frozenset((r - r0, c - c0) for r, c in cells)


def _variants(cells: tuple[Cell, ...]) -> set[frozenset[Cell]]:
    out = set()
    pts = list(cells)
    for _ in range(4):
        pts = [(c, -r) for r, c in pts]  # a quarter turn
        out.add(_normal(set(pts)))
        out.add(_normal({(r, -c) for r, c in pts}))  # and its mirror image
    return out


_SHAPES = {form: letter for letter, base in _BASE.items() for form in _variants(base)}


def shape(cells: set[Cell]) -> str | None:
    """The letter (L, I, T or S) of a tetromino, mirror images and turns counted as one; else None."""
    return _SHAPES.get(_normal(cells)) if len(cells) == 4 else None


def _placements(size: int) -> list[tuple[frozenset[Cell], str]]:
    out = []
    for form, letter in _SHAPES.items():
        h = max(r for r, _ in form) + 1
        w = max(c for _, c in form) + 1
        for r in range(size - h + 1):
            for c in range(size - w + 1):
                out.append((frozenset((r + dr, c + dc) for dr, dc in form), letter))
    out.sort(key=lambda p: (sorted(p[0]), p[1]))  # a fixed order: generation depends only on rng
    return out


def _touches(a: set[Cell] | frozenset[Cell], b: set[Cell] | frozenset[Cell]) -> bool:
    return any((r + dr, c + dc) in b for r, c in a for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)))


def generate(rng: random.Random) -> dict:
    """Plant connected tetrominoes (no 2x2, no equal shapes side by side), grow a region around each."""
    places = _placements(SIZE)
    while True:
        first = rng.choice(places)
        pieces = [first]
        cells = set(first[0])
        target = rng.randint(5, 6)
        while len(pieces) < target:
            options = [
                (p, letter)
                for p, letter in places
                if not p & cells
                and _touches(p, cells)
                and not has_2x2(cells | p)
                and all(letter != other or not _touches(p, q) for q, other in pieces)
            ]
            if not options:
                break
            pick = rng.choice(options)
            pieces.append(pick)
            cells |= pick[0]
        if len(pieces) >= 5:
            break
    owner = grow_regions(rng, SIZE, SIZE, [set(p) for p, _ in pieces], max_size=8)
    return {
        "size": SIZE,
        "regions": label_grid(owner),
        "solution": ["".join("#" if (r, c) in cells else "." for c in range(SIZE)) for r in range(SIZE)],
    }


def prompt(case: dict) -> str:
    n = case["size"]
    return (
        f"Solve this LITS puzzle. The {n}x{n} grid is divided into regions; each letter below names "
        "the region a cell belongs to.\n\n"
        f"{render(case['regions'])}\n\n"
        "Rules: in every region shade exactly four cells that are orthogonally connected (a "
        "tetromino: an L, I, T or S shape; turns and mirror images count as the same shape). All "
        "shaded cells of the grid form one orthogonally connected group. No 2x2 block of cells is "
        "entirely shaded. Two tetrominoes of the same shape (in different regions) never share an "
        "edge.\n\n" + SHADE_FORMAT
    )


def answer(case: dict) -> str:
    return render(case["solution"])


def check(case: dict, text: str) -> bool:
    n = case["size"]
    grid = parse_grid(text, n, n, "#.")
    if grid is None:
        return False
    cells = shaded(grid)
    if not cells or not connected(cells) or has_2x2(cells):
        return False
    pieces = []
    for region in region_cells(case["regions"]).values():
        piece = region & cells
        letter = shape(piece)
        if letter is None or not connected(piece):
            return False
        pieces.append((piece, letter))
    for i, (a, la) in enumerate(pieces):
        for b, lb in pieces[i + 1 :]:
            if la == lb and _touches(a, b):
                return False
    return True
