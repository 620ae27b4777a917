"""PettingZoo's classic board games as multi-turn ptbench environments (`pip install 'ptbench[bootcamp-pettingzoo]'`).

The model takes one seat (by the case's seed) against a seeded uniform-random opponent; the library's
own AEC environment keeps the board, the legal moves (its action mask) and the result. It pays 1
only for a win. Oracle: a search player (tic-tac-toe: expectimax against the random opponent, exact;
connect four: win now, else never leave the opponent a win next move, else the most central column).
No player beats a random opponent on every seed (the opponent can play well by chance), so a case is
a seed the oracle wins (`turns.winnable_seed`): the oracle scores 1 on every case by construction.
Left out: `EXCLUDED` (the card games need rlcard or hanabi's library and are games of chance; chess
is the chess adapter's; rock-paper-scissors is simultaneous and pure chance; Go's 19x19 has no search
player here that wins within the turn limit).
"""

from __future__ import annotations

import random
from functools import cache
from types import ModuleType
from typing import Any

from ptbench.bootcamp.adapters import load_library
from ptbench.bootcamp.adapters.outcome import game_config
from ptbench.bootcamp.adapters.turns import Episode, TurnGenerator, TurnInteraction
from ptbench.bootcamp.api import Identity, register_generator, register_interaction

EXTRA = "bootcamp-pettingzoo"
PREFIX = "pz."
SOURCE = "pettingzoo"
DOMAIN = "PettingZoo classic board games (multi-turn, against a seeded random opponent)"
# OpenSpiel's tic-tac-toe and connect four are counted; these are the same families (bootcamp/families.py)
SAME_FAMILY = {"pz.tictactoe_v3": "spiel.tic_tac_toe", "pz.connect_four_v3": "spiel.connect_four"}
GAMES = ("connect_four_v3", "tictactoe_v3")
EXCLUDED = {
    "chess_v6": "chess is the chess adapter's (chess.*), with an engine as opponent and oracle",
    "go_v5": "19x19 Go: no search player here wins within the turn limit",
    "rps_v2": "simultaneous and pure chance: no oracle wins every case",
    "gin_rummy_v4": "a game of chance (and needs rlcard)",
    "leduc_holdem_v4": "a game of chance (and needs rlcard)",
    "texas_holdem_v4": "a game of chance (and needs rlcard)",
    "texas_holdem_no_limit_v6": "a game of chance (and needs rlcard)",
    "hanabi_v5": "cooperative with a hidden hand (and needs hanabi's own library)",
}
_C4_LINES = [
    [(r + i * dr) * 7 + c + i * dc for i in range(4)]
    for r in range(6) for c in range(7) for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1))
    if 0 <= r + 3 * dr < 6 and 0 <= c + 3 * dc < 7
]  # fmt: skip
_TTT_LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def library() -> ModuleType:
    return load_library("pettingzoo.classic", "PettingZoo", EXTRA)


def names() -> list[str]:
    library()
    return list(GAMES)


def describe(name: str) -> dict[str, str]:
    return {"domain": "game (PettingZoo classic, against a random opponent)", "tools": "-", "levels": "default"}


def _wins(board: list[int], lines: list[Any], mark: int) -> bool:
    return any(all(board[i] == mark for i in line) for line in lines)


@cache
def _ttt_value(board: tuple[int, ...], me: int, to_move: int) -> float:
    """P(`me` wins) from here: `me` maximises, the other side plays uniformly at random."""
    other = 3 - to_move
    if _wins(list(board), _TTT_LINES, other):
        return 1.0 if other == me else 0.0
    empty = [i for i, v in enumerate(board) if v == 0]
    if not empty:
        return 0.0
    values = [_ttt_value(board[:i] + (to_move,) + board[i + 1 :], me, other) for i in empty]
    return max(values) if to_move == me else sum(values) / len(values)


class Board(Episode):
    def __init__(self, identity: Identity) -> None:
        super().__init__()
        self.game = identity["game"]
        module = getattr(library(), self.game)
        self.env = module.env()
        seed = int(identity["seed"])
        self.env.reset(seed=seed)
        self.agents = list(self.env.agents)
        self.seat = seed % 2
        self.me = self.agents[self.seat]
        self.rng = random.Random(f"pettingzoo:{self.game}:{seed}")
        self.limit = 9 if self.game == "tictactoe_v3" else 42
        self._opponent()

    def _mask(self) -> list[int]:
        obs, _, term, trunc, _ = self.env.last()
        return [] if term or trunc else [i for i, ok in enumerate(obs["action_mask"]) if ok]

    def _opponent(self) -> None:
        while not self.finished() and self.env.agent_selection != self.me:
            self.env.step(self.rng.choice(self._mask()))

    def legal(self) -> list[str]:
        return [str(a) for a in self._mask()] if self.env.agent_selection == self.me else []

    def play(self, move: str) -> None:
        self.env.step(int(move))
        self._opponent()

    def finished(self) -> bool:
        return any(self.env.terminations.values()) or any(self.env.truncations.values())

    def won(self) -> bool:
        return self.env.rewards[self.me] > 0

    def _cells(self) -> list[int]:
        board = self.env.unwrapped.board
        return list(board.squares) if self.game == "tictactoe_v3" else list(board)

    def board(self) -> str:
        cells = self._cells()
        mark = {0: ".", 1: "X", 2: "O"}
        you = mark[self.seat + 1]
        if self.game == "tictactoe_v3":  # the library numbers cells down the columns: cell = 3 * col + row
            rows = [" ".join(mark[cells[3 * c + r]] if cells[3 * c + r] else str(3 * c + r) for c in range(3))
                    for r in range(3)]  # fmt: skip
            return f"Tic-tac-toe. You play {you}; free cells show the number that plays there.\n" + "\n".join(rows)
        rows = [" ".join(mark[cells[r * 7 + c]] for c in range(7)) for r in range(6)]
        return (f"Connect four. You play {you}; a move names the column (0-6) to drop into.\n"
                + "\n".join(rows) + "\n" + " ".join(str(c) for c in range(7)))  # fmt: skip

    def oracle_move(self) -> str | None:
        legal = [int(m) for m in self.legal()]
        if not legal:
            return None
        cells, me = self._cells(), self.seat + 1
        if self.game == "tictactoe_v3":
            board = tuple(cells)
            return str(max(legal, key=lambda i: _ttt_value(board[:i] + (me,) + board[i + 1 :], me, 3 - me)))
        return str(self._connect_four(cells, legal, me))

    @staticmethod
    def _drop(cells: list[int], col: int, mark: int) -> list[int]:
        out = list(cells)
        row = max(r for r in range(6) if out[r * 7 + col] == 0)
        out[row * 7 + col] = mark
        return out

    def _connect_four(self, cells: list[int], legal: list[int], me: int) -> int:
        other = 3 - me
        for col in legal:
            if _wins(self._drop(cells, col, me), _C4_LINES, me):
                return col

        def safe(col: int) -> bool:
            after = self._drop(cells, col, me)
            return not any(_wins(self._drop(after, c, other), _C4_LINES, other)
                           for c in range(7) if after[c] == 0)  # fmt: skip

        for col in legal:  # block the opponent's win next move
            if _wins(self._drop(cells, col, other), _C4_LINES, other):
                return col
        choices = [c for c in legal if safe(c)] or legal
        return min(choices, key=lambda c: (abs(c - 3), c))


def make(identity: Identity) -> Episode:
    return Board(identity)


@register_generator("pettingzoo")
class PettingZooGenerator(TurnGenerator):
    kind = "PettingZoo classic game"
    names = staticmethod(names)
    make = staticmethod(make)
    filter_by_oracle = True  # a random opponent can play well by chance: keep the seeds the oracle wins

    def intro(self, identity: Identity) -> str:
        return "Let's play. Your opponent moves at random; win the game."


@register_interaction("pettingzoo")
class PettingZooInteraction(TurnInteraction):
    make = staticmethod(make)


def bootcamp_dict(name: str, **splits: int) -> dict[str, Any]:
    game = PettingZooGenerator.check(name)
    return game_config(f"{PREFIX}{game}", "pettingzoo", game, turns=45, max_tokens=64, **splits)
