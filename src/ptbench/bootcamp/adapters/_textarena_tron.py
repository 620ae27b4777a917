"""TextArena's grid-arena games for two, Surround (Tron) and Snake: the seeded opponent's moves and
the oracles (adapters/textarena.py plays them, as it plays the games of _textarena_duels).

Both heads move at once: seat 0's move waits while seat 1's is drawn, then the library applies both.
The opponent draws among the directions that do not crash at once (all four when every one does);
each oracle is a one-ply expectimax over that draw on a model of the library's collision rules.
"""

from __future__ import annotations

from collections import deque
from typing import Any

# ------------------------------------------------------------------------------------------- Surround
# Tron on a 5x5 grid: both heads move at once (seat 0's move waits for seat 1's), each leaves a trail;
# a wall, a trail, a head's old cell or a shared landing cell kills. The opponent draws among the
# directions that do not crash at once (all four when every one does).

_DIRECTIONS = {"up": (0, 1), "down": (0, -1), "left": (-1, 0), "right": (1, 0)}


def _surround_free(env: Any) -> set[tuple[int, int]]:
    gs = env.state.game_state
    heads = {pl.position for pl in gs["players"].values() if pl.alive}
    return {(x, y) for y in range(env.height) for x in range(env.width) if gs["board"][y][x] is None} - heads


def _surround_steps(env: Any, pid: int) -> list[tuple[str, tuple[int, int]]]:
    x, y = env.state.game_state["players"][pid].position
    return [(name, (x + dx, y + dy)) for name, (dx, dy) in _DIRECTIONS.items()]


def _surround_moves(env: Any) -> list[str]:
    free = _surround_free(env)
    safe = [f"[{name}]" for name, cell in _surround_steps(env, 1) if cell in free]
    return safe or [f"[{name}]" for name in _DIRECTIONS]


def _distances(start: tuple[int, int], free: set[tuple[int, int]]) -> dict[tuple[int, int], int]:
    """Steps from `start` to each cell of `free` it can reach."""
    seen, queue = {start: 0}, deque([start])
    while queue:
        x, y = queue.popleft()
        for dx, dy in _DIRECTIONS.values():
            nxt = (x + dx, y + dy)
            if nxt in free and nxt not in seen:
                seen[nxt] = seen[(x, y)] + 1
                queue.append(nxt)
    return seen


def _territory(mine: tuple[int, int], theirs: tuple[int, int], free: set[tuple[int, int]]) -> int:
    """Cells seat 0's head reaches first minus those the other head reaches first (a Voronoi count)."""
    near, far = _distances(mine, free), _distances(theirs, free)
    cells = set(near) | set(far)
    inf = len(free) + 1
    return sum((near.get(c, inf) < far.get(c, inf)) - (far.get(c, inf) < near.get(c, inf)) for c in cells)


def _surround(env: Any) -> str:
    """One-ply expectimax against the opponent's uniform draw: a crash of its own wins, a shared
    landing kills both (a tie, worth nothing), else the territory each head then reaches first."""
    free = _surround_free(env)
    drawn = {f"[{name}]": cell for name, cell in _surround_steps(env, 1)}
    replies = [drawn[move] for move in _surround_moves(env)]

    def expected(cell: tuple[int, int]) -> float:
        if cell not in free:
            return -1000.0
        total = 0.0
        for reply in replies:
            if reply == cell:
                total -= 100.0
            elif reply not in free:
                total += 1000.0
            else:
                total += _territory(cell, reply, free - {cell, reply})
        return total / len(replies)

    return f"[{max(_surround_steps(env, 0), key=lambda step: expected(step[1]))[0]}]"


# ---------------------------------------------------------------------------------------------- Snake
# Snake on a 5x5 grid with two apples: an apple grows the snake and scores; a wall, a body (a tail
# that moves on does not count), a shared landing cell or two heads swapping kill. The last one alive
# wins; at the turn limit the higher score does (equal: a draw, which pays 0).

Cell = tuple[int, int]


def _snake_bodies(env: Any) -> dict[int, list[Cell]]:
    return {pid: list(s.positions) for pid, s in env.state.game_state["snakes"].items() if s.alive}


def _snake_heads(env: Any, pid: int) -> list[tuple[str, Cell]]:
    x, y = env.state.game_state["snakes"][pid].positions[0]
    return [(name, (x + dx, y + dy)) for name, (dx, dy) in _DIRECTIONS.items()]


def _snake_moves(env: Any) -> list[str]:
    blocked = {cell for body in _snake_bodies(env).values() for cell in body[:-1]}
    safe = [f"[{name}]" for name, (x, y) in _snake_heads(env, 1)
            if 0 <= x < env.width and 0 <= y < env.height and (x, y) not in blocked]  # fmt: skip
    return safe or [f"[{name}]" for name in _DIRECTIONS]


def _snake_deaths(env: Any, want: dict[int, Cell]) -> set[int]:
    """Who dies when the heads go to `want`, by the library's rules in its order."""
    bodies, apples = _snake_bodies(env), env.state.game_state["apples"]
    dead = {pid for pid, (x, y) in want.items() if not (0 <= x < env.width and 0 <= y < env.height)}
    if want[0] == want[1] or (want[0] == bodies[1][0] and want[1] == bodies[0][0]):
        dead |= {0, 1}
    occupied = {cell for pid, body in bodies.items() if pid not in dead
                for cell in (body if want[pid] in apples else body[:-1])}  # fmt: skip
    return dead | {pid for pid in want if pid not in dead and want[pid] in occupied}


def _snake(env: Any) -> str:
    """One-ply expectimax against the uniform safe draw: staying alive first, the other's death, then
    apples eaten, room to move (at least the snake's length) and the way to the nearest apple."""
    bodies, apples = _snake_bodies(env), env.state.game_state["apples"]
    drawn = dict(_snake_heads(env, 1))
    replies = [drawn[move[1:-1]] for move in _snake_moves(env)]
    cells = {(x, y) for x in range(env.width) for y in range(env.height)}

    def worth(head: Cell, reply: Cell) -> float:
        dead = _snake_deaths(env, {0: head, 1: reply})
        if dead:
            return -1000.0 if 0 in dead and 1 not in dead else -500.0 if 0 in dead else 1000.0
        ate = head in apples
        free = cells - set(bodies[0][: None if ate else -1]) - set(bodies[1][:-1]) - {head, reply}
        room = _distances(head, free)
        left = [a for a in apples if a != head]
        near = min((room.get(a, 25) for a in left), default=0)
        cramped = len(room) < len(bodies[0]) + 1
        return 30.0 * ate - 30.0 * (reply in apples) - 200.0 * cramped - near

    def expected(step: tuple[str, Cell]) -> float:
        return sum(worth(step[1], reply) for reply in replies) / len(replies)

    return f"[{max(_snake_heads(env, 0), key=expected)[0]}]"


OPPONENTS = {"Surround-v0": _surround_moves, "Snake-v0": _snake_moves}
ORACLES = {"Surround-v0": _surround, "Snake-v0": _snake}
