"""GEM's (gem-llm's) text games as multi-turn ptbench environments (`pip install 'ptbench[bootcamp-gem]'`).

Each game family is one environment `gem.<Game>`, played through GEM's own engine at one registered
difficulty (its `-easy`/`-hard` variants are parameters of one family, not environments): the game's
instructions and board are the first user turn, each later observation (and the board GEM appends)
is the feedback, and the model answers in GEM's `\\boxed{…}` action format. The reward is whether the
game is won, read from the game's own state when it ends (GEM's per-step rewards are shaped partial
credit: a closeness bonus on the last guess, a share per revealed cell), so only a win pays 1.

The oracle (`GemInteraction.oracle`) is a scripted player that reads the live game (the secret
number or code, the mine layout, the Sudoku and crossword solutions) or replays the optimal
solution (Tower of Hanoi): a win on every case shows the game is winnable within its turn limit
and scored right.

Determinism: GEM draws from the *global* `random` and numpy RNGs, also while a game runs (mines are
laid at the first reveal). Each game keeps its own copy of both states, put in place around every
call into the game, so an episode is a pure function of its case (game, seed) and the model's moves.

Left out (`EXCLUDED`): GEM's math, code and QA environments read Hugging Face datasets at run time
(nodes are offline); its reasoning-gym wrappers are reasoning-gym's generators (`rg.*`); Wordle,
Hangman and WordSearch download NLTK's word list at run time; 2048 and Sokoban have no oracle here;
FifteenPuzzle deals puzzles that cannot be solved.
"""

from __future__ import annotations

import contextlib
import io
import random
from collections.abc import Callable
from types import ModuleType
from typing import Any

from ptbench.bootcamp.adapters import load_library
from ptbench.bootcamp.adapters.outcome import game_config
from ptbench.bootcamp.adapters.turns import EngineGame, EngineGenerator, EngineInteraction
from ptbench.bootcamp.api import Identity, register_generator, register_interaction
from ptbench.core.errors import UserError

EXTRA = "bootcamp-gem"
PREFIX = "gem."
SOURCE = "gem"
DOMAIN = "GEM text games (multi-turn, GEM's engine)"
# GEM ports TextArena's games: each of these is counted as TextArena's (bootcamp/families.py)
SAME_FAMILY = {"gem.GuessTheNumber": "ta.GuessTheNumber-v0", "gem.Mastermind": "ta.Mastermind-v0",
               "gem.Minesweeper": "ta.Minesweeper-v0", "gem.Sudoku": "ta.Sudoku-v0",
               "gem.TowerofHanoi": "ta.TowerOfHanoi-v0"}  # fmt: skip
# family -> the registered GEM environment id it plays (one difficulty per family)
GAMES = {
    "Crosswords": "game:Crosswords-v0-easy",
    "GuessTheNumber": "game:GuessTheNumber-v0-hard",
    "Mastermind": "game:Mastermind-v0-hard",
    "Minesweeper": "game:Minesweeper-v0-hard",
    "Sudoku": "game:Sudoku-v0-hard",
    "TowerofHanoi": "game:TowerofHanoi-v0-hard",
}
EXCLUDED = {
    "math:*, code:*, qa:*, eval:*": "read Hugging Face datasets at run time (nodes are offline)",
    "rg:*": "reasoning-gym's own generators, adapted directly as rg.*",
    "Wordle, Hangman, WordSearch": "download NLTK's word list at run time (nodes are offline)",
    "Game2048": "no oracle: no scripted player is sure to reach the target tile",
    "Sokoban": "no oracle in this adapter yet (needs a Sokoban solver)",
    "FifteenPuzzle": "shuffled without regard to parity: about half its puzzles cannot be solved, some start solved"
    " (a breadth-first search found 8 of 20 winnable)",
}
# GEM pins reasoning-gym 0.1.23 (ptbench's rg extra pins 0.1.25, which GEM's games work with):
# the extra carries GEM's other dependencies and gem-llm itself goes in without its pins.
INSTALL_HINT = f"pip install 'ptbench[{EXTRA}]' && pip install --no-deps gem-llm==0.1.0"


def library() -> ModuleType:
    try:
        return load_library("gem", "gem-llm", EXTRA)
    except UserError:
        raise UserError(f"gem-llm is not installed; {INSTALL_HINT}") from None


def names() -> list[str]:
    return sorted(GAMES)


def describe(name: str) -> dict[str, str]:
    return {"domain": "game (GEM)", "tools": "-", "levels": GAMES[name].rsplit("-", 1)[-1]}


class Game(EngineGame):
    """One GEM game in progress, with its own copies of the global `random` and numpy RNG states."""

    def __init__(self, identity: Identity) -> None:
        import numpy as np

        self.np = np
        self.family = GemGenerator.check(identity["game"])
        seed = int(identity["seed"])
        self.rng_state = random.Random(seed).getstate()
        self.np_state = np.random.RandomState(seed).get_state()
        self.done = False
        self.env = self._call(lambda: library().make(GAMES[self.family]))
        observation, info = self._call(lambda: self.env.reset(seed=seed))
        self.first = f"{observation}\n{info.get('suffix', '')}".strip()

    def _call(self, fn: Callable[[], Any]) -> Any:
        outside, outside_np = random.getstate(), self.np.random.get_state()
        random.setstate(self.rng_state)
        self.np.random.set_state(self.np_state)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                return fn()
        finally:
            self.rng_state, self.np_state = random.getstate(), self.np.random.get_state()
            random.setstate(outside)
            self.np.random.set_state(outside_np)

    @property
    def game(self) -> Any:
        return self.env.unwrapped

    def step(self, action: str) -> str:
        observation, _reward, terminated, truncated, info = self._call(lambda: self.env.step(action))
        self.done = bool(terminated or truncated)
        suffix = "" if self.done else (info or {}).get("suffix", "")
        return f"{observation}\n{suffix}".strip()

    def won(self) -> bool:
        """Whether the game's own state is a win (never the text the model wrote)."""
        return bool(_WON[self.family](self.game))


def _hanoi_moves(n: int, src: str = "A", dst: str = "C", via: str = "B") -> list[tuple[str, str]]:
    if n == 0:
        return []
    return _hanoi_moves(n - 1, src, via, dst) + [(src, dst)] + _hanoi_moves(n - 1, via, dst, src)


def _minesweeper_next(g: Any) -> str:
    if g.first_reveal:
        return rf"\boxed{{reveal {g.rows // 2} {g.cols // 2}}}"
    cells = [(r, c) for r in range(g.rows) for c in range(g.cols)]
    # flag every mine first: only a reveal checks for the win, so the last action must be a reveal
    for r, c in cells:
        if g.grid[r][c] == -1 and not g.flags[r][c]:
            return rf"\boxed{{flag {r} {c}}}"
    for r, c in cells:
        if g.grid[r][c] != -1 and not g.revealed[r][c]:
            return rf"\boxed{{reveal {r} {c}}}"
    return ""


def _sudoku_next(g: Any) -> str:
    for r in range(g.scale):
        for c in range(g.scale):
            if g.board[r][c] == 0:
                return rf"\boxed{{{r + 1} {c + 1} {g.full_grid[r][c]}}}"
    return ""


def _crosswords_next(g: Any) -> str:
    for r, row in enumerate(g.board):
        for c, cell in enumerate(row):
            if cell == "_":
                return rf"\boxed{{{r} {c} {g.solution[r][c].upper()}}}"
    return ""


def _hanoi_oracle(g: Any) -> str:
    # replay the optimal solution from the start up to the current board: the next move is the first
    # whose result differs from the board as it is now (the oracle plays from the start, as it is used)
    board = {"A": list(range(g.num_disks, 0, -1)), "B": [], "C": []}
    for src, dst in _hanoi_moves(g.num_disks):
        if board == g.board:
            return rf"\boxed{{{src} {dst}}}"
        board[dst].append(board[src].pop())
    return ""


ORACLES: dict[str, Callable[[Any], str]] = {
    "Crosswords": _crosswords_next,
    "GuessTheNumber": lambda g: rf"\boxed{{{g.game_number}}}",
    "Mastermind": lambda g: r"\boxed{" + " ".join(map(str, g.game_code)) + "}",
    "Minesweeper": _minesweeper_next,
    "Sudoku": _sudoku_next,
    "TowerofHanoi": _hanoi_oracle,
}
_WON: dict[str, Callable[[Any], bool]] = {
    "Crosswords": lambda g: g._is_game_over(),
    "GuessTheNumber": lambda g: g.game_number in g.previous_guesses,
    "Mastermind": lambda g: tuple(g.game_code) in g.previous_guesses,
    "Minesweeper": lambda g: not g.first_reveal and g._is_solved(),
    "Sudoku": lambda g: g._is_puzzle_complete(),
    "TowerofHanoi": lambda g: g.board["C"] == list(range(g.num_disks, 0, -1)),
}


@register_generator("gem")
class GemGenerator(EngineGenerator):
    """Params: game (a GEM game family this adapter plays). A case is (game, seed)."""

    kind = "GEM game"
    names = staticmethod(names)
    library = staticmethod(library)
    make = Game
    seed_bits = 31


@register_interaction("gem")
class GemInteraction(EngineInteraction):
    make = Game
    ended = "Game over."  # the whole answer goes to GEM, which reads its `\\boxed{…}` action

    def oracle(self, state: Game, identity: Identity) -> str | None:
        """The scripted player's next answer (it reads the live game or solves it)."""
        if state.done:
            return None
        return ORACLES[state.family](state.game) or None


def bootcamp_dict(game: str, **splits: int) -> dict[str, Any]:
    return game_config(f"{PREFIX}{GemGenerator.check(game)}", "gem", game, turns=100, max_tokens=512, **splits)
