"""Chess positions with python-chess and a UCI engine (`pip install 'ptbench[bootcamp-chess]'`;
the engine: Stockfish from Debian's packages, `apt-get install stockfish`).

Two task families, each with its own generator and verifier:
- `chess.mate_in_one` (single turn): a position reached by a seeded random game in which the side
  to move has a mate in one; the answer is `<answer>MOVE</answer>` in SAN or UCI. The verifier plays
  the move on the board: 1 only if it is legal and checkmates (python-chess's rules, exact: any
  mating move counts). The reference answer is a mating move found by trying every legal move.
- `chess.endgame` (multi-turn): a seeded king-and-queen or king-and-rook against king position in
  which the engine finds a forced mate for White; the model plays White against the engine and wins
  only by checkmate within the move limit. The engine (one thread, a fixed depth, its hash cleared
  before every search) is the opponent, the verifier of every case's mate, and the oracle (its
  best move for White), so an episode is a pure function of its case and the model's moves.
"""

from __future__ import annotations

import os
import random
import re
import shutil
from types import ModuleType
from typing import Any

from ptbench.bootcamp.adapters import load_library
from ptbench.bootcamp.adapters.outcome import game_config
from ptbench.bootcamp.adapters.turns import Episode, TurnGenerator, TurnInteraction
from ptbench.bootcamp.api import (
    Generator,
    Identity,
    RewardCalculator,
    register_generator,
    register_interaction,
    register_reward,
)
from ptbench.core.errors import UserError

EXTRA = "bootcamp-chess"
PREFIX = "chess."
SOURCE = "chess"
DOMAIN = "chess positions (python-chess rules, Stockfish as opponent and verifier)"
FAMILIES = ("endgame", "mate_in_one")
ENGINE_DEPTH = 12  # the oracle's and the verifier's search depth
DEFENCE_DEPTH = 8  # the opponent's
MATE_WITHIN = 20  # an endgame case's forced mate is at most this many moves (engine-verified)
ENDGAME_MOVES = 40  # the model's moves allowed (the forced mate needs at most MATE_WITHIN)
_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)


def library() -> ModuleType:
    return load_library("chess", "python-chess", EXTRA)


def names() -> list[str]:
    library()
    return list(FAMILIES)


def describe(name: str) -> dict[str, str]:
    kind = "single turn" if name == "mate_in_one" else "multi-turn, against Stockfish"
    return {"domain": f"chess ({kind})", "tools": "-", "levels": "default"}


def engine_path() -> str:
    """The UCI engine: $PTBENCH_CHESS_ENGINE, else `stockfish` on PATH or where Debian puts it."""
    for path in (os.environ.get("PTBENCH_CHESS_ENGINE"), shutil.which("stockfish"), "/usr/games/stockfish"):
        if path and os.access(path, os.X_OK):
            return path
    raise UserError("the chess engine Stockfish is not installed; apt-get install stockfish "
                    "(or set PTBENCH_CHESS_ENGINE to a UCI engine)")  # fmt: skip


def _search(board: Any, depth: int) -> Any:
    """The engine's analysis of `board` at `depth`, from a fresh engine (so it depends on the board only).

    One engine process per search, closed before returning: a cached engine's background thread is not
    a daemon, so a process that had played chess never exited (the interpreter waits for that thread
    before any atexit hook could close it). Starting Stockfish costs milliseconds; a depth-12 search
    costs more."""
    import chess.engine

    with chess.engine.SimpleEngine.popen_uci(engine_path()) as engine:
        engine.configure({"Threads": 1, "Hash": 16})
        return engine.analyse(board, chess.engine.Limit(depth=depth))


# ------------------------------------------------------------------------------- mate in one


def _mates(board: Any) -> list[Any]:
    found = []
    for move in sorted(board.legal_moves, key=lambda m: m.uci()):
        if not board.gives_check(move):  # cheap, and every mate is a check
            continue
        board.push(move)
        if board.is_checkmate():
            found.append(move)
        board.pop()
    return found


def mate_in_one_position(rng: random.Random) -> str:
    """A FEN from a seeded random game: the first position after ply 10 where a mate in one exists."""
    chess = library()
    while True:
        board = chess.Board()
        for ply in range(300):
            if board.is_game_over():
                break
            if ply >= 10 and _mates(board):
                return board.fen()
            board.push(rng.choice(sorted(board.legal_moves, key=lambda m: m.uci())))


def parse_move(board: Any, text: str) -> Any:
    """A legal move from SAN or UCI text, or None."""
    text = text.strip()
    for parse in (board.parse_san, board.parse_uci):
        try:
            move = parse(text)
        except ValueError:
            continue
        if move in board.legal_moves:
            return move
    return None


@register_generator("chess_mate")
class MateInOneGenerator(Generator):
    """A case: the FEN of a position whose side to move mates in one."""

    def case(self, rng: random.Random) -> Identity:
        return {"family": "mate_in_one", "fen": mate_in_one_position(random.Random(rng.getrandbits(64)))}

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> None:
        library()

    def prompt(self, identity: Identity) -> str:
        board = library().Board(identity["fen"])
        side = "White" if board.turn else "Black"
        return (f"Chess position (FEN {identity['fen']}):\n{board.unicode(empty_square='.')}\n{side} to move and "
                "mate in one. Give the mating move in SAN or UCI as <answer>MOVE</answer>.")  # fmt: skip

    def dedup_key(self, identity: Identity) -> str:
        return identity["fen"]

    def reference_completion(self, identity: Identity) -> str | None:
        board = library().Board(identity["fen"])
        mates = _mates(board)
        return f"<answer>{board.san(mates[0])}</answer>" if mates else None


@register_reward("chess_mate")
class MateInOneReward(RewardCalculator):
    """1 only if the last `<answer>` is one legal move that checkmates (a list or a hedge is no move)."""

    def extract(self, text: str) -> str | None:
        found = _ANSWER.findall(text or "")
        return found[-1].strip() if found else None

    def verify(self, extracted: str, identity: Identity) -> float:
        board = library().Board(identity["fen"])
        move = parse_move(board, extracted)
        if move is None:
            return 0.0
        board.push(move)
        return float(board.is_checkmate())


# ---------------------------------------------------------------------------------- endgame


def endgame_position(rng: random.Random) -> str:
    """A seeded K+Q or K+R v K position, White to move, in which the engine finds a forced mate."""
    chess = library()
    while True:
        piece = rng.choice([chess.QUEEN, chess.ROOK])
        squares = rng.sample(range(64), 3)
        board = chess.Board(None)
        board.set_piece_at(squares[0], chess.Piece(chess.KING, chess.WHITE))
        board.set_piece_at(squares[1], chess.Piece(piece, chess.WHITE))
        board.set_piece_at(squares[2], chess.Piece(chess.KING, chess.BLACK))
        board.turn = chess.WHITE
        if not board.is_valid() or board.is_game_over():
            continue
        score = _search(board, ENGINE_DEPTH)["score"].white()
        if score.is_mate() and 0 < score.mate() <= MATE_WITHIN:
            return board.fen()


class Endgame(Episode):
    limit = ENDGAME_MOVES

    def __init__(self, identity: Identity) -> None:
        super().__init__()
        self.position = library().Board(identity["fen"])

    def legal(self) -> list[str]:
        return sorted(self.position.san(m) for m in self.position.legal_moves)

    def play(self, move: str) -> None:
        self.position.push_san(move)
        if not self.finished():
            self.position.push(_search(self.position, DEFENCE_DEPTH)["pv"][0])

    def finished(self) -> bool:
        return self.position.is_game_over(claim_draw=True)

    def won(self) -> bool:
        return self.position.is_checkmate() and self.position.turn == library().BLACK

    def board(self) -> str:
        return (f"Position (FEN {self.position.fen()}), you are White:\n"
                f"{self.position.unicode(empty_square='.')}")  # fmt: skip

    def oracle_move(self) -> str | None:
        if self.finished():
            return None
        return str(self.position.san(_search(self.position, ENGINE_DEPTH)["pv"][0]))


def make(identity: Identity) -> Episode:
    return Endgame(identity)


@register_generator("chess_endgame")
class EndgameGenerator(TurnGenerator):
    kind = "chess family"
    names = staticmethod(lambda: ["endgame"])
    make = staticmethod(make)

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> None:
        super().check_params(params)
        engine_path()

    def case(self, rng: random.Random) -> Identity:
        return {"game": "endgame", "fen": endgame_position(random.Random(rng.getrandbits(64)))}

    def intro(self, identity: Identity) -> str:
        return f"Checkmate Black within {ENDGAME_MOVES} moves; Stockfish defends."

    def dedup_key(self, identity: Identity) -> str:
        return identity["fen"]


@register_interaction("chess_endgame")
class EndgameInteraction(TurnInteraction):
    make = staticmethod(make)


def _check(name: Any) -> str:
    if name not in names():
        raise UserError(f"chess has no task family {name!r} (it has {', '.join(FAMILIES)})")
    return str(name)


def bootcamp_dict(name: str, **splits: int) -> dict[str, Any]:
    if _check(name) == "endgame":
        config = game_config(f"{PREFIX}endgame", "chess_endgame", "endgame", turns=ENDGAME_MOVES + 3,
                             max_tokens=64, **splits)  # fmt: skip
        return config
    return {
        "name": f"{PREFIX}mate_in_one",
        "seed": 1234,
        "levels": [{"name": "default", "generator": "chess_mate", "params": {}}],
        "splits": {"test": splits.get("test", 50), "train": splits.get("train", 500)},
        "reward": {"name": "chess_mate"},
        "limits": {"max_assistant_turns": 1, "max_tool_calls": 0},
        "sampling": {"temperature": 0.0, "max_tokens": 256},
    }
