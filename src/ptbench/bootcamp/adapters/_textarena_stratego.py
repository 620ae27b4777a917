"""TextArena's Stratego (adapters/textarena.py plays it): the seeded opponent's legal moves, the
library's gaps closed before the first move, and the oracle.

The view: the library shows the board to the player about to move by a message to *both* players
(`_observe_current_state` adds it with no addressee), so after each of seat 0's moves seat 0 was shown
seat 1's board, every rank of seat 1's army in plain letters, and seat 1's move list. `mend` keeps that
message for the player about to move only: seat 0 sees its own board, where every piece of seat 1
is `?`, the moves announced to it, and the ranks a battle reveals (as in Stratego).

The length: the library sets no bound (its state has no turn limit). `mend` ends the game as a draw,
which pays seat 0 nothing, once MOVE_LIMIT moves of both seats have been played.

The oracle is a witness that a case is winnable, not a fair player: it reads the whole board (the
library's secret, never the prompt) and walks a piece to seat 1's Flag along the cheapest path, a
Miner through the Bombs around it, moving its own pieces aside and sending a piece that beats
whatever blocks the way. A case is a seed it wins (textarena.WINNABLE_ONLY), as for every duel.
"""

from __future__ import annotations

import heapq
import random
import types
from typing import Any

MOVE_LIMIT = 400  # moves of both seats; then the game is a draw (seat 0's turn limit is 200)
_RANKS = {"Flag": 0, "Bomb": 11, "Spy": 1, "Scout": 2, "Miner": 3, "Sergeant": 4, "Lieutenant": 5, "Captain": 6,
          "Major": 7, "Colonel": 8, "General": 9, "Marshal": 10}  # fmt: skip
_STEPS = ((-1, 0), (1, 0), (0, -1), (0, 1))
_FAR = 10**6

Cell = tuple[int, int]


def _text(src: Cell, dst: Cell) -> str:
    return f"[{chr(src[0] + 65)}{src[1]} {chr(dst[0] + 65)}{dst[1]}]"


def _moves(board: list[list[Any]], pid: int) -> list[tuple[Cell, Cell]]:
    """Player `pid`'s legal moves, as the library lists them (StrategoEnv._observe_current_state): one
    step onto an empty square or an enemy piece; a Scout any distance along a clear line."""
    found = []
    for r in range(10):
        for c in range(10):
            piece = board[r][c]
            if not isinstance(piece, dict) or piece["player"] != pid or piece["rank"] in ("Bomb", "Flag"):
                continue
            reach = 10 if piece["rank"] == "Scout" else 1
            for dr, dc in _STEPS:
                for k in range(1, reach + 1):
                    nr, nc = r + k * dr, c + k * dc
                    if not (0 <= nr < 10 and 0 <= nc < 10):
                        break
                    target = board[nr][nc]
                    if target is None:
                        found.append(((r, c), (nr, nc)))
                        continue
                    if isinstance(target, dict) and target["player"] != pid:
                        found.append(((r, c), (nr, nc)))
                    break
    return found


def opponent(env: Any) -> list[str]:
    return [_text(a, b) for a, b in _moves(env.board, 1)]


def _wins(attacker: str, defender: str) -> bool:
    """Whether `attacker` takes `defender`'s square (StrategoEnv.step's battle)."""
    if attacker == defender:
        return False
    if defender == "Bomb":
        return attacker == "Miner"
    if defender == "Flag" or (attacker == "Spy" and defender == "Marshal"):
        return True
    return _RANKS[attacker] > _RANKS[defender]


def _enter_cost(board: list[list[Any]], rank: str, cell: Cell, goal: Cell) -> int:
    """The cost of a piece of `rank` of seat 0 stepping onto `cell` on its way to `goal`: an empty
    square 1, an enemy it beats 2, one of its own movable pieces 3 (to move aside), an enemy it does
    not beat 8 (for another piece to clear); a lake, its own Bomb or Flag, or (but for a Miner) an
    enemy Bomb never (the Bombs around the Flag are a Miner's to take)."""
    piece = board[cell[0]][cell[1]]
    if piece is None or cell == goal:
        return 1
    if not isinstance(piece, dict):
        return _FAR
    if piece["player"] == 0:
        return _FAR if piece["rank"] in ("Bomb", "Flag") else 3
    if _wins(rank, piece["rank"]):
        return 2
    return _FAR if piece["rank"] == "Bomb" else 8


def _costs(board: list[list[Any]], rank: str, goal: Cell) -> dict[Cell, int]:
    """Each square's cost to `goal` for a piece of `rank` of seat 0, stepping by `_enter_cost` (a
    Dijkstra from the goal)."""

    dist = {goal: 0}
    heap = [(0, goal)]
    while heap:
        d, (r, c) = heapq.heappop(heap)
        if d > dist.get((r, c), _FAR):
            continue
        step = _enter_cost(board, rank, (r, c), goal)
        if step >= _FAR:
            continue
        for dr, dc in _STEPS:
            n = (r + dr, c + dc)
            if 0 <= n[0] < 10 and 0 <= n[1] < 10 and d + step < dist.get(n, _FAR):
                dist[n] = d + step
                heapq.heappush(heap, (d + step, n))
    return dist


def _plan(board: list[list[Any]], goal: Cell, legal: set[tuple[Cell, Cell]], depth: int = 0) -> str | None:
    """A move that brings a piece of seat 0 nearer `goal` (taking it if it can): the piece with the
    cheapest path steps along it, or the own piece in its way steps aside, or (once) a piece that
    beats the enemy in its way heads for that enemy."""
    goal_piece = board[goal[0]][goal[1]]
    tables: dict[str, dict[Cell, int]] = {}
    candidates = []
    for r in range(10):
        for c in range(10):
            piece = board[r][c]
            if isinstance(piece, dict) and piece["player"] == 0 and piece["rank"] not in ("Bomb", "Flag"):
                if isinstance(goal_piece, dict) and not _wins(piece["rank"], goal_piece["rank"]):
                    continue
                table = tables.setdefault(piece["rank"], _costs(board, piece["rank"], goal))
                candidates.append((table.get((r, c), _FAR), (r, c), table))
    for cost, (r, c), table in sorted(candidates, key=lambda x: (x[0], x[1])):
        if cost >= _FAR:
            break
        rank = board[r][c]["rank"]
        steps = [(r + dr, c + dc) for dr, dc in _STEPS if 0 <= r + dr < 10 and 0 <= c + dc < 10]
        nxt = min(steps, key=lambda s: (table.get(s, _FAR) + _enter_cost(board, rank, s, goal), s))
        target = board[nxt[0]][nxt[1]]
        if (target is None or nxt == goal or (isinstance(target, dict) and target["player"] == 1
                                              and _wins(rank, target["rank"]))) and ((r, c), nxt) in legal:  # fmt: skip
            return _text((r, c), nxt)
        if isinstance(target, dict) and target["player"] == 0:
            aside = [m for m in sorted(legal) if m[0] == nxt and board[m[1][0]][m[1][1]] is None and m[1] != (r, c)]
            if aside:
                return _text(*aside[0])
        if isinstance(target, dict) and target["player"] == 1 and depth == 0:
            cleared = _plan(board, nxt, legal, depth + 1)
            if cleared is not None:
                return cleared
    return None


def oracle(env: Any) -> str:
    board = env.board
    flag = next(((r, c) for r in range(10) for c in range(10) if isinstance(board[r][c], dict)
                 and board[r][c]["player"] == 1 and board[r][c]["rank"] == "Flag"), None)  # fmt: skip
    legal = _moves(board, 0)
    if not legal:
        return "[A0 A0]"
    move = None if flag is None else _plan(board, flag, set(legal))
    if move is not None:
        return move
    safe = [m for m in legal if board[m[1][0]][m[1][1]] is None or _wins(board[m[0][0]][m[0][1]]["rank"],
                                                                         board[m[1][0]][m[1][1]]["rank"])]  # fmt: skip
    # no piece has a way: a seeded draw among the safe moves (the same position, the same move)
    return _text(*random.Random(str(board)).choice(sorted(safe or legal)))


# ---------------------------------------------------------------------------------------------- mends


def _board_to_mover_only(env: Any) -> None:
    type(env)._observe_current_state(env)
    other = env.state.observations[1 - env.state.current_player_id]
    if other and str(other[-1][1]).startswith("Current Board:"):
        other.pop()


def _bounded_step(env: Any, action: str) -> Any:
    done, info = type(env).step(env, action)
    if not done and env.state.turn >= MOVE_LIMIT:
        env.state.set_draw(reason=f"The game reached {MOVE_LIMIT} moves: a draw.")
        done = True
    return done, info


def _check_winner(env: Any) -> int | None:
    """The library's test (the winner is the other of a player left with only Bombs and a Flag), read
    off the board: its piece lists keep a Bomb a Miner took (the square then the Miner's), and once the
    Miner moves on, the library's own test read that empty square and raised."""
    for player in (0, 1):
        pieces = [p for row in env.board for p in row if isinstance(p, dict) and p["player"] == player]
        if all(p["rank"] in ("Bomb", "Flag") for p in pieces):
            return 1 - player
    return None


def mend(env: Any) -> None:
    """The board shown to the player about to move only, a bound on the game's length (above), and
    the test of a player left without movable pieces read off the board (`_check_winner`). Bound
    methods on the instance, so a deep copy of the game carries them to the copy."""
    env._check_winner = types.MethodType(_check_winner, env)
    env._observe_current_state = types.MethodType(_board_to_mover_only, env)
    env.step = types.MethodType(_bounded_step, env)
