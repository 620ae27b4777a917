"""More of TextArena's two-player games: the seeded opponent's legal moves and the oracle of each
(adapters/textarena.py plays them, as it plays WildTicTacToe and Chopsticks from _textarena_oracles).

The model holds seat 0; seat 1 is a uniform draw among the moves `OPPONENTS[game](env)` lists, from
the game's own RNG copy. Each oracle reads only what seat 0 is shown (the board, or the log of cards
turned face up) and searches a small model of the library's rules, checked move for move against the
library by tests/bootcamp/adapters/test_textarena_duels.py. A case is a seed the oracle wins (the seed filter
in textarena.WINNABLE_ONLY), and the outcome is the library's own reward.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

Board = tuple[tuple[str, ...], ...]


def _board(env: Any) -> Board:
    """The game's board (rows of cell marks, '' for empty) as a value the models can copy cheaply."""
    return tuple(tuple(row) for row in env.state.game_state["board"])


# ------------------------------------------------------------------------------------------ SimpleTak


def _tak_moves(env: Any) -> list[str]:
    n = env.board_size
    return [f"[{r * n + c}]" for r in range(n) for c in range(n) if env.state.game_state["board"][r][c] == ""]


def _tak_distance(board: Board, mark: str) -> int:
    """Stones `mark` still needs for a 4-connected path across the board (either way): a 0-1 search
    where own stones cost 0, empty cells 1 and the other's stones block."""
    n = len(board)
    best = n * n + 1
    for across in (False, True):
        cost: dict[tuple[int, int], int] = {}
        queue: deque[tuple[int, int, int]] = deque()
        for k in range(n):
            r, c = (k, 0) if across else (0, k)
            if board[r][c] in ("", mark):
                step = 0 if board[r][c] == mark else 1
                queue.appendleft((step, r, c)) if step == 0 else queue.append((step, r, c))
        while queue:
            d, r, c = queue.popleft()
            if cost.get((r, c), best + 1) <= d:
                continue
            cost[(r, c)] = d
            if (c if across else r) == n - 1:
                best = min(best, d)
                continue
            for nr, nc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                if 0 <= nr < n and 0 <= nc < n and board[nr][nc] in ("", mark):
                    step = 0 if board[nr][nc] == mark else 1
                    item = (d + step, nr, nc)
                    queue.appendleft(item) if step == 0 else queue.append(item)
    return best


def _simple_tak(env: Any) -> str:
    """The cell that shortens seat 0's path most and the opponent's least (seat 0 plays 'O')."""
    board, n = _board(env), env.board_size

    def score(cell: int) -> tuple[int, int]:
        r, c = divmod(cell, n)
        after = tuple(tuple("O" if (i, j) == (r, c) else v for j, v in enumerate(row)) for i, row in enumerate(board))
        mine, theirs = _tak_distance(after, "O"), _tak_distance(after, "X")
        return (0, 0) if mine == 0 else (1, mine - theirs + (8 if theirs <= 1 else 0))

    cells = [int(m[1:-1]) for m in _tak_moves(env)]
    return f"[{min(cells, key=score)}]" if cells else "[0]"


# -------------------------------------------------------------------- capture games: Crusade, Alquerque
# Both end at a move limit (the higher capture score wins) or when a side has no piece or no legal
# move (it loses). The oracle is a one-ply expectimax against the uniform reply.

_KNIGHT = ((2, 1), (2, -1), (-2, 1), (-2, -1), (1, 2), (1, -2), (-1, 2), (-1, -2))
_KING = tuple((dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if (dr, dc) != (0, 0))


class _Capture(ABC):
    """One capture game's rules on a board of strings: `pieces[pid]` the marks, moves as
    (from, to, captured cell or None)."""

    def __init__(self, n: int, pieces: tuple[str, str], limit: int, per_capture: int, files: str) -> None:
        self.n, self.pieces, self.limit, self.per_capture, self.files = n, pieces, limit, per_capture, files

    def coord(self, r: int, c: int) -> str:
        return f"{self.files[c]}{self.n - r}"

    @abstractmethod
    def moves(self, board: Board, pid: int) -> Iterator[tuple[tuple[int, int], tuple[int, int], Any]]:
        """Every legal move of player `pid` on `board`."""

    def apply(self, board: Board, move: tuple[Any, Any, Any], pid: int) -> Board:
        (fr, fc), (tr, tc), taken = move
        rows = [list(row) for row in board]
        rows[fr][fc], rows[tr][tc] = "", self.pieces[pid]
        if taken is not None:
            rows[taken[0]][taken[1]] = ""
        return tuple(tuple(row) for row in rows)

    def ended(self, board: Board, count: int, score: tuple[int, int]) -> float | None:
        """Seat 0's result if the game is over after a move (1 win, -1 loss, 0 draw), else None."""
        for pid in (0, 1):  # the library checks seat 0 first
            if not any(self.pieces[pid] in row for row in board) or next(self.moves(board, pid), None) is None:
                return -1.0 if pid == 0 else 1.0
        if count >= self.limit:
            return float((score[0] > score[1]) - (score[0] < score[1]))
        return None

    def value(self, board: Board, count: int, score: tuple[int, int]) -> float:
        over = self.ended(board, count, score)
        return 100.0 * over if over is not None else float(score[0] - score[1])

    def text(self, move: tuple[Any, Any, Any]) -> str:
        return f"[{self.coord(*move[0])} {self.coord(*move[1])}]"

    def opponent(self, env: Any) -> list[str]:
        return [self.text(m) for m in self.moves(_board(env), 1)]

    def oracle(self, env: Any) -> str:
        board, count = _board(env), env.state.game_state["move_count"]
        score = tuple(env.state.game_state["score"])

        def expected(move: tuple[Any, Any, Any]) -> float:
            mine = (score[0] + self.per_capture * (move[2] is not None), score[1])
            after = self.apply(board, move, 0)
            over = self.ended(after, count + 1, mine)
            if over is not None:
                return 100.0 * over
            replies = list(self.moves(after, 1))
            total = 0.0
            for reply in replies:
                theirs = mine[1] + self.per_capture * (reply[2] is not None)
                total += self.value(self.apply(after, reply, 1), count + 2, (mine[0], theirs))
            return total / len(replies)

        moves = list(self.moves(board, 0))
        return self.text(max(moves, key=expected)) if moves else "[a1 a1]"


class _Crusade(_Capture):
    """Knights only: a move lands on an empty square or captures (CrusadeEnv._legal_moves_for_player)."""

    def moves(self, board: Board, pid: int) -> Iterator[tuple[tuple[int, int], tuple[int, int], Any]]:
        mine, n = self.pieces[pid], self.n
        for r in range(n):
            for c in range(n):
                if board[r][c] != mine:
                    continue
                for dr, dc in _KNIGHT:
                    tr, tc = r + dr, c + dc
                    if 0 <= tr < n and 0 <= tc < n and board[tr][tc] != mine:
                        yield (r, c), (tr, tc), (tr, tc) if board[tr][tc] else None


class _Alquerque(_Capture):
    """A step forward (straight or diagonal) to an empty point, or a jump over an adjacent enemy in
    any of the eight directions (AlquerqueEnv.step)."""

    def moves(self, board: Board, pid: int) -> Iterator[tuple[tuple[int, int], tuple[int, int], Any]]:
        mine, theirs, n = self.pieces[pid], self.pieces[1 - pid], self.n
        ahead = -1 if pid == 0 else 1
        for r in range(n):
            for c in range(n):
                if board[r][c] != mine:
                    continue
                for dc in (0, -1, 1):
                    tr, tc = r + ahead, c + dc
                    if 0 <= tr < n and 0 <= tc < n and board[tr][tc] == "":
                        yield (r, c), (tr, tc), None
                for dr, dc in _KING:
                    tr, tc = r + 2 * dr, c + 2 * dc
                    if 0 <= tr < n and 0 <= tc < n and board[tr][tc] == "" and board[r + dr][c + dc] == theirs:
                        yield (r, c), (tr, tc), (r + dr, c + dc)


_CRUSADE = _Crusade(8, ("W", "B"), 40, 1, "abcdefgh")
_ALQUERQUE = _Alquerque(5, ("R", "B"), 60, 10, "abcde")

# ----------------------------------------------------------------------------------------- MemoryGame
# The cards lie face down; a pair turned face up is said to both players ("Cards at positions [r c]
# and [r c] are A and B"), so the oracle learns them from the game's public log, never from the deal.

_SHOWN = re.compile(r"Cards at positions \[(\d+) (\d+)\] and \[(\d+) (\d+)\] are (\w+) and (\w+)")


def _memory_open(env: Any) -> list[tuple[int, int]]:
    n, matched = env.grid_size, env.state.game_state["matched_positions"]
    return [(r, c) for r in range(n) for c in range(n) if (r, c) not in matched]


def _memory_moves(env: Any) -> list[str]:
    cells = _memory_open(env)
    return [f"[{a[0]} {a[1]} {b[0]} {b[1]}]" for i, a in enumerate(cells) for b in cells[i + 1 :]]


def _memory_game(env: Any) -> str:
    """Perfect memory: a known pair if there is one, else two cards never seen (an unseen card with
    the one seen card left when only one is unseen)."""
    seen: dict[tuple[int, int], str] = {}
    for _, message in env.state.logs:
        for m in _SHOWN.finditer(str(message)):
            r1, c1, r2, c2 = map(int, m.groups()[:4])
            seen[(r1, c1)], seen[(r2, c2)] = m.group(5), m.group(6)
    cells = _memory_open(env)
    known = [cell for cell in cells if cell in seen]
    by_symbol: dict[str, list[tuple[int, int]]] = {}
    for cell in known:
        by_symbol.setdefault(seen[cell], []).append(cell)
    pair = next((cells for cells in by_symbol.values() if len(cells) >= 2), None)
    unseen = [cell for cell in cells if cell not in seen]
    if pair is None:
        pair = unseen[:2] if len(unseen) >= 2 else unseen + known[:1]
    if len(pair) < 2:
        return "[0 0 0 1]"
    (r1, c1), (r2, c2) = pair[:2]
    return f"[{r1} {c1} {r2} {c2}]"


# ----------------------------------------------------------------------------------- QuantumTicTacToe
# The library's own collapse rule runs on a copy of the position (QuantumTicTacToeEnv's
# `_resolve_cycles` on a shell that holds only the game state), so the oracle's model is the
# library's rules themselves. Seat 0 plays 'O'.


class _Record:
    """Stands in for the library's state in a simulated move: keeps the game state and the winner."""

    def __init__(self, game_state: dict[str, Any]) -> None:
        self.game_state = game_state
        self.winner: int | None = None

    def add_observation(self, *args: Any, **kwargs: Any) -> None:
        pass

    def set_winner(self, player_id: int, reason: str) -> None:
        self.winner = player_id


def _qttt_cells(game_state: dict[str, Any]) -> list[int]:
    return [r * 3 + c for r in range(3) for c in range(3) if not game_state["board"][r][c]]


def _qttt_play(env: Any, game_state: dict[str, Any], count: int, pid: int, a: int, b: int) -> tuple[Any, int, Any]:
    """(game state after, move count after, winner or None) of seat `pid` marking cells a and b."""
    shell = object.__new__(type(env))
    copied = {"board": [list(row) for row in game_state["board"]], "superpositions": dict(game_state["superpositions"])}
    shell.state, shell.cell_mapping = _Record(copied), env.cell_mapping
    shell.state.game_state["superpositions"][count] = (pid, divmod(a, 3), divmod(b, 3))
    shell._resolve_cycles()
    return shell.state.game_state, count + 1, shell.state.winner


def _qttt_pairs(game_state: dict[str, Any]) -> list[tuple[int, int]]:
    cells = _qttt_cells(game_state)
    return [(a, b) for i, a in enumerate(cells) for b in cells[i + 1 :]]


def _qttt_moves(env: Any) -> list[str]:
    return [f"[{a},{b}]" for a, b in _qttt_pairs(env.state.game_state)]


def _qttt(env: Any) -> str:
    """One-ply expectimax against the uniform reply: a win now, else the move the opponent's replies
    least often win and most often leave a win for seat 0's next move."""
    game_state, count = env.state.game_state, env.move_count

    def expected(pair: tuple[int, int]) -> float:
        after, n, winner = _qttt_play(env, game_state, count, 0, *pair)
        if winner is not None:
            return 10.0 if winner == 0 else -10.0
        replies = _qttt_pairs(after)
        total = 0.0
        for reply in replies:
            then, _, won = _qttt_play(env, after, n, 1, *reply)
            total += -10.0 if won == 1 else 10.0 if won == 0 else 0.0
        return total / len(replies) if replies else 0.0

    pairs = _qttt_pairs(game_state)
    return "[{},{}]".format(*max(pairs, key=expected)) if pairs else "[0,1]"


# ---------------------------------------------------------------------------------------- HighSociety
# Ten prestige cards (1-10, in a hidden shuffled order) are auctioned with sealed bids from money cards
# 1-11; the higher bid takes the card and spends its money card, a tie bids again; the most prestige
# wins. Seat 0 bids first, and seat 1's bid is not shown until both are in. Both hands are public
# knowledge: both start with 1-11 and each auction's bids and winner are announced.


def _high_society_moves(env: Any) -> list[str]:
    return [f"[{card}]" for card in env.state.game_state["player_money"][1]]


def _high_society(env: Any) -> str:
    """The bid that best trades the chance of beating a uniform bid from the other's hand (times
    the prize) against the worth of the card spent."""
    gs = env.state.game_state
    prize, mine, theirs = gs["current_prize"], sorted(gs["player_money"][0]), gs["player_money"][1]

    def worth(bid: int) -> float:
        return prize * sum(card < bid for card in theirs) / len(theirs) - 2 * bid / 11

    return f"[{max(mine, key=worth)}]" if mine else "[1]"


# --------------------------------------------------------------------------- IteratedTwoThirdsAverage
# Both guess in [0, 100] (seat 0 first; the other's guess is shown only once both are in); the guess
# nearer two thirds of the average takes the round, most rounds wins. The target lies below the
# midpoint of the two guesses, so the lower guess always takes the round: guessing 0 never loses one.


def _two_thirds_moves(env: Any) -> list[str]:
    return [f"[{n}]" for n in range(int(env.min_guess), int(env.max_guess) + 1)]


# ------------------------------------------------------------------------------ IteratedUltimatumGame
# Seat 0 proposes every round (the library's default keeps the roles): it offers part of a pool of 50,
# the other accepts (the pool is split) or rejects (neither gets anything); the larger total wins.
# Keeping the whole pool loses nothing when refused, so the oracle offers $0; it wins unless every
# offer is refused (the seed filter keeps the others).


OPPONENTS: dict[str, Callable[[Any], list[str]]] = {
    "SimpleTak-v0": _tak_moves,
    "Crusade-v0": _CRUSADE.opponent,
    "Alquerque-v0": _ALQUERQUE.opponent,
    "MemoryGame-v0": _memory_moves,
    "QuantumTicTacToe-v0": _qttt_moves,
    "HighSociety-v0": _high_society_moves,
    "IteratedTwoThirdsAverage-v0": _two_thirds_moves,
    "IteratedUltimatumGame-v0": lambda env: ["[Accept]", "[Reject]"],
}
ORACLES: dict[str, Callable[[Any], str]] = {
    "SimpleTak-v0": _simple_tak,
    "Crusade-v0": _CRUSADE.oracle,
    "Alquerque-v0": _ALQUERQUE.oracle,
    "MemoryGame-v0": _memory_game,
    "QuantumTicTacToe-v0": _qttt,
    "HighSociety-v0": _high_society,
    "IteratedTwoThirdsAverage-v0": lambda env: f"[{int(env.min_guess)}]",
    "IteratedUltimatumGame-v0": lambda env: "[Offer: $0]",
}
