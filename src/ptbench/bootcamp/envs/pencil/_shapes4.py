"""Shared helpers of the region and loop families (Araf, Tatamibari, Ripple Effect, Yajilin, Country Road,
Shimaguni, Sashigane, ...): random partitions into regions, region answers (one letter a region), and
loops drawn with the Tracks pieces (`|`, `-`, `L`, `J`, `7`, `F`).
"""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil._grid import LABELS, Grid, connected, neighbours, parse_grid

Cell = tuple[int, int]
STEP = {"N": (-1, 0), "S": (1, 0), "W": (0, -1), "E": (0, 1)}
OPPOSITE = {"N": "S", "S": "N", "W": "E", "E": "W"}
PIECES = {"|": "NS", "-": "EW", "L": "NE", "J": "NW", "7": "SW", "F": "SE"}
_PIECE_OF = {frozenset(ends): piece for piece, ends in PIECES.items()}
LOOP_LEGEND = (
    "| joins top and bottom, - joins left and right, L joins top and right, J joins top and left, "
    "7 joins bottom and left, F joins bottom and right"
)


def partition(rng: random.Random, rows: int, cols: int, lo: int, hi: int) -> list[list[int]]:
    """A random partition of the grid into connected regions, the owner index of each cell: each free cell
    (in reading order) starts a region grown at random towards a size in [lo, hi]; a region left smaller
    than lo joins a random neighbouring region (so sizes may pass hi a little)."""
    owner = [[-1] * cols for _ in range(rows)]
    regions: list[list[Cell]] = []
    for r in range(rows):
        for c in range(cols):
            if owner[r][c] != -1:
                continue
            target, cells = rng.randint(lo, hi), [(r, c)]
            owner[r][c] = len(regions)
            while len(cells) < target:
                free = sorted({n for cell in cells for n in neighbours(*cell, rows, cols) if owner[n[0]][n[1]] == -1})
                if not free:
                    break
                nr, nc = rng.choice(free)
                owner[nr][nc] = len(regions)
                cells.append((nr, nc))
            regions.append(cells)
    for k, cells in enumerate(regions):
        if 0 < len(cells) < lo:
            near = sorted({owner[n[0]][n[1]] for cell in cells for n in neighbours(*cell, rows, cols)} - {k})
            into = rng.choice(near)
            for r, c in cells:
                owner[r][c] = into
            regions[into] += cells
            regions[k] = []
    renumber: dict[int, int] = {}
    for r in range(rows):
        for c in range(cols):
            owner[r][c] = renumber.setdefault(owner[r][c], len(renumber))
    return owner


def layout(owner: list[list[int]]) -> Grid:
    """The regions as a grid of letters, one letter a region."""
    return ["".join(LABELS[k] for k in row) for row in owner]


def regions_of(grid: Grid) -> dict[str, list[Cell]]:
    """The cells of each letter of a layout, in reading order."""
    out: dict[str, list[Cell]] = {}
    for r, row in enumerate(grid):
        for c, ch in enumerate(row):
            out.setdefault(ch, []).append((r, c))
    return out


def parse_regions(text: str, rows: int, cols: int) -> list[list[Cell]] | None:
    """The regions of a region answer (letters, one letter a region, each letter's cells connected); None if
    `text` is not such a grid."""
    got = parse_grid(text, rows, cols, LABELS)
    if got is None:
        return None
    regions = list(regions_of(got).values())
    if not all(connected(set(cells)) for cells in regions):
        return None
    return regions


def region_answer(regions: list[list[Cell]], rows: int, cols: int) -> Grid:
    """A region answer naming regions A, B, ... in reading order of their first cell."""
    grid = [["?"] * cols for _ in range(rows)]
    for k, cells in enumerate(sorted(regions, key=min)):
        for r, c in cells:
            grid[r][c] = LABELS[k]
    return ["".join(row) for row in grid]


def random_loop(rng: random.Random, rows: int, cols: int, bumps: int) -> list[Cell]:
    """A random simple loop through cell centres, its cells in order: a 2x2 loop pushed outwards at random
    (an edge a-b of the loop beside two free cells a', b' becomes a-a'-b'-b), up to `bumps` pushes."""
    r0, c0 = rng.randrange(rows - 1), rng.randrange(cols - 1)
    loop = [(r0, c0), (r0, c0 + 1), (r0 + 1, c0 + 1), (r0 + 1, c0)]
    on = set(loop)
    for _ in range(bumps):
        options = []
        for k, a in enumerate(loop):
            b = loop[(k + 1) % len(loop)]
            dr, dc = b[1] - a[1], b[0] - a[0]  # perpendicular to a-b, both sides
            for s in (1, -1):
                a2, b2 = (a[0] + s * dr, a[1] + s * dc), (b[0] + s * dr, b[1] + s * dc)
                if all(0 <= p[0] < rows and 0 <= p[1] < cols and p not in on for p in (a2, b2)):
                    options.append((k, a2, b2))
        if not options:
            break
        k, a2, b2 = rng.choice(options)
        loop[k + 1 : k + 1] = [a2, b2]
        on |= {a2, b2}
    return loop


def _direction(a: Cell, b: Cell) -> str:
    return next(d for d, (dr, dc) in STEP.items() if (a[0] + dr, a[1] + dc) == b)


def loop_grid(loop: list[Cell], rows: int, cols: int, fill: Grid | None = None) -> Grid:
    """The loop drawn with its pieces over `fill` (by default every cell '.')."""
    grid = [list(row) for row in fill] if fill else [["."] * cols for _ in range(rows)]
    for k, cell in enumerate(loop):
        ends = _direction(cell, loop[k - 1]) + _direction(cell, loop[(k + 1) % len(loop)])
        grid[cell[0]][cell[1]] = _PIECE_OF[frozenset(ends)]
    return ["".join(row) for row in grid]


def read_loop(grid: Grid) -> list[Cell] | None:
    """The cells of the one loop the grid's pieces draw, in order; None if the pieces do not form exactly one
    closed loop (a piece not joined to its neighbours, a loose end, two loops)."""
    rows, cols = len(grid), len(grid[0])
    track = [(r, c) for r in range(rows) for c in range(cols) if grid[r][c] in PIECES]
    if len(track) < 4:
        return None
    start = track[0]
    out_dir = PIECES[grid[start[0]][start[1]]][0]
    loop, cell = [start], start
    while True:
        dr, dc = STEP[out_dir]
        nxt = (cell[0] + dr, cell[1] + dc)
        if not (0 <= nxt[0] < rows and 0 <= nxt[1] < cols) or grid[nxt[0]][nxt[1]] not in PIECES:
            return None
        came = OPPOSITE[out_dir]
        ends = PIECES[grid[nxt[0]][nxt[1]]]
        if came not in ends:
            return None
        if nxt == start:
            break
        if nxt in loop or len(loop) > rows * cols:
            return None
        loop.append(nxt)
        cell, out_dir = nxt, ends.replace(came, "", 1)
    return loop if len(loop) == len(track) else None
