"""Masyu (Pearl): one closed loop through cell centres that passes every pearl; it turns on a black
pearl and goes straight on both sides of it, and goes straight on a white pearl and turns next to it."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil._regions import Cell, parse_grid, render

NAME = "masyu"
TITLE = "Masyu (Pearl)"
SIZE = 7

PIECES = {"|": "NS", "-": "EW", "L": "NE", "J": "NW", "7": "SW", "F": "SE"}
_PIECE_OF = {frozenset(ends): piece for piece, ends in PIECES.items()}
_STEP = {"N": (-1, 0), "S": (1, 0), "E": (0, 1), "W": (0, -1)}
_BACK = {"N": "S", "S": "N", "E": "W", "W": "E"}


def _boundary(blocks: set[Cell], n: int) -> dict[Cell, list[Cell]] | None:
    """The loop around a set of unit squares whose corners are cell centres (square (i, j) has corners
    (i, j) .. (i + 1, j + 1)); None unless it is one simple closed loop."""
    links: dict[Cell, list[Cell]] = {}

    def add(a: Cell, b: Cell) -> None:
        links.setdefault(a, []).append(b)
        links.setdefault(b, []).append(a)

    for i, j in blocks:
        if (i - 1, j) not in blocks:
            add((i, j), (i, j + 1))
        if (i + 1, j) not in blocks:
            add((i + 1, j), (i + 1, j + 1))
        if (i, j - 1) not in blocks:
            add((i, j), (i + 1, j))
        if (i, j + 1) not in blocks:
            add((i, j + 1), (i + 1, j + 1))
    if any(len(v) != 2 for v in links.values()):
        return None
    start = next(iter(links))
    prev, cur, length = start, links[start][0], 1
    while cur != start:
        prev, cur = cur, links[cur][0] if links[cur][0] != prev else links[cur][1]
        length += 1
    return links if length == len(links) else None


def _direction(a: Cell, b: Cell) -> str:
    return next(d for d, (dr, dc) in _STEP.items() if (a[0] + dr, a[1] + dc) == b)


def generate(rng: random.Random) -> dict:
    """Grow a random simply connected set of squares; its outline is the loop; pearls are read off it."""
    n = SIZE
    m = n - 1
    while True:
        blocks = {(rng.randrange(m), rng.randrange(m))}
        target = rng.randint(m * m * 2 // 5, m * m * 3 // 5)
        for _ in range(400):
            if len(blocks) >= target:
                break
            i, j = rng.choice(sorted(blocks))
            di, dj = rng.choice(((1, 0), (-1, 0), (0, 1), (0, -1)))
            new = (i + di, j + dj)
            if not (0 <= new[0] < m and 0 <= new[1] < m) or new in blocks:
                continue
            if _boundary(blocks | {new}, n) is not None:
                blocks.add(new)
        links = _boundary(blocks, n)
        assert links is not None  # every accepted step keeps one simple loop
        grid = [["."] * n for _ in range(n)]
        for cell, (a, b) in links.items():
            grid[cell[0]][cell[1]] = _PIECE_OF[frozenset((_direction(cell, a), _direction(cell, b)))]
        sol = ["".join(row) for row in grid]
        pearls = [["."] * n for _ in range(n)]
        for r, c in sorted(links):
            kind = _pearl_kind(sol, r, c)
            if kind and rng.random() < 0.6:
                pearls[r][c] = kind
        count = sum(row.count("B") + row.count("W") for row in pearls)
        if count >= 6 and any("B" in row for row in pearls):
            return {"size": n, "pearls": ["".join(row) for row in pearls], "solution": sol}


def _pearl_kind(grid: list[str], r: int, c: int) -> str | None:
    """Which pearl (B black, W white) the loop of `grid` would satisfy at (r, c), if any."""
    piece = grid[r][c]
    if piece not in PIECES:
        return None
    ahead = []
    for d in PIECES[piece]:
        nr, nc = r + _STEP[d][0], c + _STEP[d][1]
        ahead.append((d, grid[nr][nc]))
    straight = piece in "|-"
    if not straight and all(nxt == ("|" if d in "NS" else "-") for d, nxt in ahead):
        return "B"
    if straight and any(nxt not in "|-" for _, nxt in ahead):
        return "W"
    return None


def prompt(case: dict) -> str:
    n = case["size"]
    return (
        f"Solve this Masyu (Pearl) puzzle on a {n}x{n} grid. B is a black pearl, W a white pearl, "
        ". an empty cell:\n\n"
        f"{render(case['pearls'])}\n\n"
        "Draw one closed loop that runs through the centres of cells, moving between orthogonally "
        "adjacent cells, never visiting a cell twice, and passing through every pearl (it may also use "
        "empty cells). On a black pearl the loop turns 90 degrees, and it goes straight through the "
        "next cell on both sides of that pearl. On a white pearl the loop goes straight through, and it "
        "turns in at least one of the two cells before and after that pearl.\n\n"
        "Write the loop inside <answer></answer>: one line per row, one character per cell: each loop "
        "cell as the piece joining the two sides the loop leaves it by (| joins top and bottom, - joins "
        "left and right, L joins top and right, J joins top and left, 7 joins bottom and left, F joins "
        "bottom and right), every other cell as '.'. Write exactly one grid and nothing else inside the tags."
    )


def answer(case: dict) -> str:
    return render(case["solution"])


def check(case: dict, text: str) -> bool:
    n = case["size"]
    grid = parse_grid(text, n, n, "." + "".join(PIECES))
    if grid is None:
        return False
    rows = ["".join(row) for row in grid]
    loop = {(r, c) for r in range(n) for c in range(n) if rows[r][c] != "."}
    if not loop:
        return False
    for r, c in loop:  # every side a piece leaves by meets a piece that leaves by the facing side
        for d in PIECES[rows[r][c]]:
            nr, nc = r + _STEP[d][0], c + _STEP[d][1]
            if not (0 <= nr < n and 0 <= nc < n) or _BACK[d] not in PIECES.get(rows[nr][nc], ""):
                return False
    start = min(loop)
    seen, stack = {start}, [start]
    while stack:  # each piece has two joined sides, so one connected group is one loop
        r, c = stack.pop()
        for d in PIECES[rows[r][c]]:
            nxt = (r + _STEP[d][0], c + _STEP[d][1])
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    if seen != loop:
        return False
    return all(
        _pearl_kind(rows, r, c) == kind
        for r, line in enumerate(case["pearls"])
        for c, kind in enumerate(line)
        if kind != "."
    )
