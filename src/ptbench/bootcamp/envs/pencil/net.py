"""Net: rotate every tile of a grid so that the tiles' links join all the cells into one network without
loops (a tree): each link of a tile meets a link of the tile beside it, and no link points off the grid.

Cases: a 4x4 or 5x5 grid and a random spanning tree of its cells (randomised Kruskal); each cell's tile
has the links of its tree edges (dead ends, straights, corners, tees and crosses), and every tile is
shown turned by a random number of quarter turns. A shuffle that every tile turned alike (0 to 3
quarter turns) would solve is drawn again. The answer gives, for each tile, how many quarter turns
clockwise to apply to the shown tile (0 to 3); the check turns the tiles and reads the links (every
link matched, none off the grid, one connected network with one link fewer than cells), so any valid
turning scores.
"""

from __future__ import annotations

import random
from typing import Any

from ptbench.bootcamp.envs.pencil._grid import RULES_TAIL, parse_grid, render

NAME = "net"
TITLE = "Net"
SIDES = "NESW"  # clockwise: a quarter turn clockwise takes N to E, E to S, S to W, W to N
STEP = {"N": (-1, 0), "E": (0, 1), "S": (1, 0), "W": (0, -1)}
OPPOSITE = {"N": "S", "S": "N", "E": "W", "W": "E"}


def turn(tile: str, quarters: int) -> str:
    """The tile's links after `quarters` quarter turns clockwise, in N E S W order."""
    moved = {SIDES[(SIDES.index(side) + quarters) % 4] for side in tile}
    return "".join(side for side in SIDES if side in moved)


def is_tree(tiles: list[list[str]]) -> bool:
    """Whether the tiles' links are all matched, stay on the grid and join every cell into one tree."""
    size = len(tiles)
    links = 0
    for r in range(size):
        for c in range(size):
            for side in tiles[r][c]:
                dr, dc = STEP[side]
                nr, nc = r + dr, c + dc
                if not (0 <= nr < size and 0 <= nc < size) or OPPOSITE[side] not in tiles[nr][nc]:
                    return False
                links += 1
    if links // 2 != size * size - 1:
        return False
    seen, stack = {(0, 0)}, [(0, 0)]
    while stack:
        r, c = stack.pop()
        for side in tiles[r][c]:
            nxt = (r + STEP[side][0], c + STEP[side][1])
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return len(seen) == size * size


def _tree(rng: random.Random, size: int) -> list[list[str]]:
    parent = {(r, c): (r, c) for r in range(size) for c in range(size)}

    def root(p: tuple[int, int]) -> tuple[int, int]:
        while parent[p] != p:
            parent[p] = parent[parent[p]]
            p = parent[p]
        return p

    edges = [((r, c), side) for r in range(size) for c in range(size) for side in "ES"
             if (r + STEP[side][0] < size and c + STEP[side][1] < size)]  # fmt: skip
    rng.shuffle(edges)
    links: dict[tuple[int, int], set[str]] = {p: set() for p in parent}
    for (r, c), side in edges:
        other = (r + STEP[side][0], c + STEP[side][1])
        a, b = root((r, c)), root(other)
        if a != b:
            parent[a] = b
            links[(r, c)].add(side)
            links[other].add(OPPOSITE[side])
    return [["".join(s for s in SIDES if s in links[(r, c)]) for c in range(size)] for r in range(size)]


def generate(rng: random.Random) -> dict[str, Any]:
    size = rng.choice((4, 5))
    tree = _tree(rng, size)
    while True:
        turns = [[rng.randrange(4) for _ in range(size)] for _ in range(size)]
        shown = [[turn(tree[r][c], turns[r][c]) for c in range(size)] for r in range(size)]
        if not any(is_tree([[turn(t, k) for t in row] for row in shown]) for k in range(4)):
            break
    solution = ["".join(str((4 - turns[r][c]) % 4) for c in range(size)) for r in range(size)]
    return {"size": size, "tiles": shown, "solution": solution}


def prompt(case: dict[str, Any]) -> str:
    size = case["size"]
    shown = "\n".join(" ".join(f"{t:<4}" for t in row).rstrip() for row in case["tiles"])
    return (
        f"Net puzzle on a {size}x{size} grid. Each cell holds a tile, written as the sides of the cell its links "
        "lead to: N (up), E (right), S (down), W (left); e.g. NE is a corner joining the top and the right side, "
        "EW a straight, NES a tee.\n"
        "Rotate each tile by 0, 1, 2 or 3 quarter turns clockwise (a quarter turn clockwise takes N to E, E to S, "
        "S to W and W to N) so that:\n"
        "1. every link meets a link of the neighbouring tile on that side, and no link points off the edge of "
        "the grid (the grid does not wrap around);\n"
        "2. all the cells are joined into one connected network with no loops.\n\n"
        f"Tiles as shown (rows top to bottom):\n{shown}\n\n"
        f"Answer: a grid of {size} lines of {size} digits, each the number of quarter turns clockwise (0, 1, 2 "
        f"or 3) to apply to that tile as shown. {RULES_TAIL}"
    )


def answer(case: dict[str, Any]) -> str:
    return render(case["solution"])


def check(case: dict[str, Any], text: str) -> bool:
    size = case["size"]
    got = parse_grid(text, size, size, "0123")
    if got is None:
        return False
    return is_tree([[turn(case["tiles"][r][c], int(got[r][c])) for c in range(size)] for r in range(size)])
