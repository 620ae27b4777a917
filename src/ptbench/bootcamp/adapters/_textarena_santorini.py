"""TextArena's Santorini (base game, fixed worker placement, two players): the seeded opponent's moves
and the oracle (adapters/textarena.py plays them, as it plays the games of _textarena_duels).

Each turn a player moves one of its two workers to an adjacent cell (up at most one level, never onto
a dome or a worker) and then builds one level on a cell adjacent to where it landed (on a level 3, a
dome). Standing on level 3 wins; so does leaving the other side with no move. The library lists the
next player's legal moves itself (`game_state["valid_moves"]`): that list is the opponent's, and the
oracle's move model is checked against it by tests/bootcamp/adapters/test_textarena_duels.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

Cell = tuple[int, Any]  # (height 0-3, or 4 for a dome; the worker (player, number) or None)
Move = tuple[int, tuple[int, int], tuple[int, int], tuple[int, int]]  # worker number, from, to, build
_AROUND = tuple((dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if (dr, dc) != (0, 0))


def _near(r: int, c: int) -> Iterator[tuple[int, int]]:
    for dr, dc in _AROUND:
        if 0 <= r + dr < 5 and 0 <= c + dc < 5:
            yield r + dr, c + dc


def moves(board: list[list[Cell]], pid: int) -> Iterator[Move]:
    """The legal moves of `pid`, in the order of the library's `_get_valid_moves`."""
    for r in range(5):
        for c in range(5):
            worker = board[r][c][1]
            if worker is None or worker[0] != pid:
                continue
            for mr in range(max(0, r - 1), min(5, r + 2)):
                for mc in range(max(0, c - 1), min(5, c + 2)):
                    height, occupant = board[mr][mc]
                    if (mr, mc) == (r, c) or occupant is not None or height == 4 or height - board[r][c][0] > 1:
                        continue
                    for br in range(max(0, mr - 1), min(5, mr + 2)):
                        for bc in range(max(0, mc - 1), min(5, mc + 2)):
                            vacated = (br, bc) == (r, c)
                            if (br, bc) != (mr, mc) and board[br][bc][0] < 4 and (vacated or board[br][bc][1] is None):
                                yield worker[1], (r, c), (mr, mc), (br, bc)


def text(move: Move, pid: int) -> str:
    number, (r, c), (mr, mc), (br, bc) = move
    return f"[{'NW'[pid]}{number}{chr(65 + r)}{c + 1}{chr(65 + mr)}{mc + 1}{chr(65 + br)}{bc + 1}]"


def apply(board: list[list[Cell]], move: Move, pid: int) -> list[list[Cell]]:
    number, (r, c), (mr, mc), (br, bc) = move
    after = [list(row) for row in board]
    after[r][c] = (after[r][c][0], None)
    after[mr][mc] = (after[mr][mc][0], (pid, number))
    after[br][bc] = (after[br][bc][0] + 1, None)
    return after


def _threats(board: list[list[Cell]], pid: int) -> int:
    """Cells `pid` could step up onto level 3 from next turn (the win in one)."""
    return len({(nr, nc) for r in range(5) for c in range(5)
                if board[r][c][1] is not None and board[r][c][1][0] == pid and board[r][c][0] >= 2
                for nr, nc in _near(r, c) if board[nr][nc] == (3, None)})  # fmt: skip


def _standing(board: list[list[Cell]], pid: int) -> int:
    return sum(board[r][c][0] for r in range(5) for c in range(5) if board[r][c][1] and board[r][c][1][0] == pid)


def opponent(env: Any) -> list[str]:
    return [m.strip() for m in str(env.state.game_state["valid_moves"]).split(",") if m.strip()]


def oracle(env: Any) -> str:
    """A win now if there is one; else the move that least often lets the uniform reply win at once
    (step onto level 3), then the most ways to win next turn, then height over the other side's."""
    board = env.board

    def worth(move: Move) -> float:
        if board[move[2][0]][move[2][1]][0] == 3:
            return 1000.0
        after = apply(board, move, 0)
        replies = list(moves(after, 1))
        if not replies:
            return 1000.0  # the other side cannot move: the library gives seat 0 the game
        if next(moves(after, 0), None) is None:
            return -1000.0
        lost = sum(after[m[2][0]][m[2][1]][0] == 3 for m in replies) / len(replies)
        return -100.0 * lost + 10.0 * min(_threats(after, 0), 2) + 2.0 * (_standing(after, 0) - _standing(after, 1))

    mine = list(moves(board, 0))
    return text(max(mine, key=worth), 0) if mine else "[N1A1A2A3]"
