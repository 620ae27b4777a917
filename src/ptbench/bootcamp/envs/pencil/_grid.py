"""Strict grid parsing and rendering shared by the pencil-puzzle families.

An answer grid is one line per row; a row is its cells separated by single spaces (`L . # 2`) or the
cells written together (`L.#2`), each cell one character of the family's alphabet. Anything else is no
grid: a wrong number of rows or cells, a cell outside the alphabet, prose before or after, two grids
("A or B"), a list of grids. Blank lines around the grid and a surrounding ``` fence are tolerated.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

Grid = list[str]  # one string per row, one character per cell


def grid_lines(text: str, rows: int) -> list[str] | None:
    """The `rows` stripped lines of an answer grid (a surrounding ``` fence and blank lines around it
    dropped); None if `text` is no string or has another number of lines."""
    if not isinstance(text, str):
        return None
    lines = [line.strip() for line in text.strip().splitlines()]
    if len(lines) >= 2 and lines[0].startswith("```") and lines[-1] == "```":
        lines = [line.strip() for line in "\n".join(lines[1:-1]).strip().splitlines()]
    return lines if len(lines) == rows else None


def parse_grid(text: str, rows: int, cols: int, alphabet: str) -> Grid | None:
    """The rows x cols grid `text` holds, every cell in `alphabet`; None if it holds anything else."""
    lines = grid_lines(text, rows)
    if lines is None:
        return None
    grid = []
    for line in lines:
        cells = _cells(line, cols)
        if cells is None or any(c not in alphabet for c in cells):
            return None
        grid.append(cells)
    return grid


def _cells(line: str, cols: int) -> str | None:
    tokens = line.split()
    if len(tokens) == cols and all(len(t) == 1 for t in tokens) and line == " ".join(tokens):
        return "".join(tokens)
    if len(tokens) == 1 and len(tokens[0]) == cols:
        return tokens[0]
    return None


def render(grid: Grid) -> str:
    """The grid as the answer format writes it: one line per row, cells separated by single spaces."""
    return "\n".join(" ".join(row) for row in grid)


def neighbours(r: int, c: int, rows: int, cols: int) -> Iterator[tuple[int, int]]:
    """The orthogonal neighbours of (r, c) inside a rows x cols grid (up, down, left, right)."""
    for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        nr, nc = r + dr, c + dc
        if 0 <= nr < rows and 0 <= nc < cols:
            yield nr, nc


def diagonal_neighbours(r: int, c: int, rows: int, cols: int) -> Iterator[tuple[int, int]]:
    """The (up to 8) cells touching (r, c), orthogonally or diagonally."""
    for dr in (-1, 0, 1):
        for dc in (-1, 0, 1):
            nr, nc = r + dr, c + dc
            if (dr or dc) and 0 <= nr < rows and 0 <= nc < cols:
                yield nr, nc


RULES_TAIL = (
    "Give your complete solution once, inside <answer></answer> tags, in exactly this format and nothing "
    "else inside the tags: one line per row, the row's cells separated by single spaces."
)

LABELS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"  # region / piece names in a rendered layout


def cell_name(r: int, c: int) -> str:
    """A cell as the prompts name it: (row,col), 1-based."""
    return f"({r + 1},{c + 1})"


def counts(grid: Grid, mark: str) -> tuple[list[int], list[int]]:
    """How many cells of each row and of each column are `mark`."""
    rows = [row.count(mark) for row in grid]
    cols = [sum(row[c] == mark for row in grid) for c in range(len(grid[0]))]
    return rows, cols


def connected(cells: set[tuple[int, int]]) -> bool:
    """Whether the cells form one orthogonally connected group (an empty set is connected)."""
    if not cells:
        return True
    start = next(iter(sorted(cells)))
    seen, stack = {start}, [start]
    while stack:
        r, c = stack.pop()
        for n in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if n in cells and n not in seen:
                seen.add(n)
                stack.append(n)
    return len(seen) == len(cells)


def domino_tiling(rng: random.Random, rows: int, cols: int) -> list[list[list[int]]]:
    """A random tiling of the rows x cols grid (an even number of cells) with dominoes, each
    [[r, c], [r2, c2]], in reading order of their first cell: each free cell, in reading order, takes its
    right or lower neighbour at random; a dead end (the bottom row's last free cell) starts again."""
    while True:
        taken = [[False] * cols for _ in range(rows)]
        tiles: list[list[list[int]]] = []
        dead = False
        for r in range(rows):
            for c in range(cols):
                if taken[r][c]:
                    continue
                ways = [(r, c + 1)] if c + 1 < cols and not taken[r][c + 1] else []
                if r + 1 < rows:
                    ways.append((r + 1, c))
                if not ways:
                    dead = True
                    break
                r2, c2 = rng.choice(ways)
                taken[r][c] = taken[r2][c2] = True
                tiles.append([[r, c], [r2, c2]])
            if dead:
                break
        if not dead:
            return tiles
