"""The seeded-game shapes shared by the game adapters. A case is (game, seed) (`SeededGameGenerator`);
the episode's reward is 1 for a win and 0 otherwise, taken from the game (`Interaction.outcome`),
never from the model's text; the third answer the game cannot use ends it as a loss.

- Games ptbench steps itself (Gymnasium toy-text, MiniGrid/BabyAI, PettingZoo classic, chess
  endgames): the model answers `Move: <move>` with one of the legal moves each user turn lists. An
  adapter supplies an `Episode` (its live state) and its oracle: the next move of a solver or search
  player from the live state, which must win every generated case (`TurnGenerator`, `TurnInteraction`).
- Games played in their library's own engine, which reads the model's text (GEM, TextWorld,
  ScienceWorld, TextWorldExpress): the first observation is the prompt, each later one the feedback.
  An adapter supplies an `EngineGame` (the game in its engine) and the interaction's oracle
  (`EngineGenerator`, `EngineInteraction`); engines slow to start are kept in an `EnginePool`.
"""

from __future__ import annotations

import random
import re
import threading
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from ptbench.bootcamp.adapters.outcome import outcome_result
from ptbench.bootcamp.api import Generator, Identity, Interaction, InteractionResult, RewardResult
from ptbench.core.errors import UserError

STRIKES = 3  # answers naming no legal move before the game counts as lost
_MOVE = re.compile(r"^\s*move\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
FILTER_TRIES = 64  # seeds tried per case where a case is kept only if the oracle wins it


class Episode(ABC):
    """One game in progress. `limit` moves of the model's at most; then the game is lost."""

    limit: int = 100

    def __init__(self) -> None:
        self.moves_made = 0
        self.strikes = 0

    @abstractmethod
    def legal(self) -> list[str]:
        """The model's legal moves now, as it must spell them."""

    @abstractmethod
    def play(self, move: str) -> None:
        """Apply one legal move (and whatever the game or the opponent does after it)."""

    @abstractmethod
    def finished(self) -> bool: ...

    @abstractmethod
    def won(self) -> bool:
        """Whether the game ended in the model's win (the only outcome that pays)."""

    @abstractmethod
    def board(self) -> str:
        """The state as text."""

    @abstractmethod
    def oracle_move(self) -> str | None:
        """The solver's next move from this state (None: it has none)."""

    def over(self) -> bool:
        return self.strikes >= STRIKES or self.finished() or self.moves_made >= self.limit

    def score(self) -> float:
        return 1.0 if self.strikes < STRIKES and self.finished() and self.won() else 0.0

    def view(self) -> str:
        left = self.limit - self.moves_made
        return (f"{self.board()}\nYour legal moves: {', '.join(self.legal())}\n"
                f"Moves left: {left}. Reply with one line `Move: <move>`.")  # fmt: skip


def parse_move(text: str, legal: list[str]) -> str | None:
    """The last `Move:` line's move if it is one of `legal` (case and spaces forgiven), else None."""
    found = _MOVE.findall(text or "")
    if not found:
        return None
    said = found[-1].strip()
    if said in legal:  # exact first: case can matter (chess: bxc3 is a pawn, Bxc3 a bishop)
        return said
    said = said.replace(" ", "").lower()
    return next((m for m in legal if m.replace(" ", "").lower() == said), None)


class TurnInteraction(Interaction):
    """The loop over an adapter's `Episode` (`make` builds one from a case)."""

    make: Callable[[Identity], Episode]

    def start(self, identity: Identity) -> Episode:
        return type(self).make(identity)

    def respond(self, state: Episode, identity: Identity, assistant_text: str) -> InteractionResult:
        if state.over():
            return InteractionResult(terminate=True, feedback="The game is over.", turn_score=state.score())
        move = parse_move(assistant_text, state.legal())
        if move is None:
            state.strikes += 1
            if state.strikes >= STRIKES:
                return InteractionResult(terminate=True, feedback="Too many invalid moves: you lose.", turn_score=0.0,
                                         extra={"valid": False, "outcome": 0.0})  # fmt: skip
            return InteractionResult(terminate=False, feedback="That is not one of your legal moves.\n" + state.view(),
                                     extra={"valid": False})  # fmt: skip
        state.play(move)
        state.moves_made += 1
        if state.over():
            score = state.score()
            said = "you won" if score >= 1.0 else "you did not win"
            return InteractionResult(terminate=True, feedback=f"Game over: {said}.", turn_score=score,
                                     extra={"valid": True, "outcome": score})  # fmt: skip
        return InteractionResult(terminate=False, feedback=state.view(), extra={"valid": True})

    def outcome(self, state: Episode, identity: Identity) -> RewardResult:
        """The episode's reward: the game's outcome (not any text)."""
        return outcome_result(state.score())

    def oracle(self, state: Episode, identity: Identity) -> str | None:
        """The next assistant text of the adapter's solver, given the live state from `start`."""
        move = None if state.over() else state.oracle_move()
        return None if move is None else f"Move: {move}"


def oracle_wins(make: Callable[[Identity], Episode], identity: Identity) -> bool:
    """Play the oracle through a whole episode of `identity`: whether it wins."""
    episode = make(identity)
    while not episode.over():
        move = episode.oracle_move()
        if move is None or move not in episode.legal():
            return False
        episode.play(move)
        episode.moves_made += 1
    return episode.score() >= 1.0


def first_case(draw: Callable[[], Identity], keep: Callable[[Identity], bool], name: str, what: str) -> Identity:
    """The first case `draw()` makes that `keep` accepts, in FILTER_TRIES draws (deterministic when
    `draw` draws from a seeded rng); else one line naming the game and WHAT none of the seeds gave."""
    for _ in range(FILTER_TRIES):
        identity = draw()
        if keep(identity):
            return identity
    raise UserError(f"{name}: {what} of {FILTER_TRIES} seeds; this game cannot make cases")


def winnable_seed(rng: random.Random, make: Callable[[Identity], Episode], base: Identity) -> Identity:
    """A case `base | {seed}` the oracle wins: seeds drawn from `rng` until one is (for games of
    chance or against a random opponent, where no player wins every seed). Deterministic in `rng`."""
    return first_case(
        lambda: {**base, "seed": rng.getrandbits(32)}, lambda i: oracle_wins(make, i), str(base), "the oracle won none"
    )


class SeededGameGenerator(Generator):
    """Params: game (one of the adapter's `names`). A case is (game, seed of `seed_bits` bits)."""

    names: Callable[[], list[str]]
    kind: str = "game"  # what a game is called in the error naming a wrong one
    seed_bits: int = 32

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.game = self.check(params.get("game"))

    @classmethod
    def check(cls, name: Any) -> str:
        if not isinstance(name, str) or name not in cls.names():
            raise UserError(f"{cls.kind} {name!r} is not one this adapter plays; `ptbench bootcamp list` shows them")
        return name

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> None:
        cls.check(params.get("game"))

    def case(self, rng: random.Random) -> Identity:
        return {"game": self.game, "seed": rng.getrandbits(self.seed_bits)}

    def dedup_key(self, identity: Identity) -> str:
        return f"{identity['game']}/{identity['seed']}"


class TurnGenerator(SeededGameGenerator):
    """A game ptbench steps itself; `make` builds its `Episode` from a case."""

    make: Callable[[Identity], Episode]
    filter_by_oracle: bool = False  # keep only seeds the oracle wins (chance, random opponents)

    def case(self, rng: random.Random) -> Identity:
        if self.filter_by_oracle:
            return winnable_seed(rng, type(self).make, {"game": self.game})
        return super().case(rng)

    def prompt(self, identity: Identity) -> str:
        episode = type(self).make(identity)
        return f"{self.intro(identity)}\n{episode.view()}"

    def intro(self, identity: Identity) -> str:
        return f"Let's play {identity['game']}."


# ------------------------------------------------------------------------------ games in their engine

ACTION_LINE = re.compile(r"^\s*action\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)


class EngineGame(ABC):
    """One case in play in its library's engine: `first` (the opening observation), `done`, and
    `strikes` (answers it could not use) are set by the subclass's constructor and `step`."""

    first: str
    done: bool = False
    strikes: int = 0

    @abstractmethod
    def step(self, action: str) -> str:
        """Play one action; the engine's observation after it (sets `done` when the game ended)."""

    @abstractmethod
    def won(self) -> bool:
        """Whether the engine's own state is a win (never the text the model wrote)."""

    def finish(self) -> None:
        """End the game before its engine did (strikes, or a prompt's throwaway game): free what it holds."""
        self.done = True

    def score(self) -> float:
        return float(self.done and self.won())


class EnginePool:
    """Engines that are slow to start (a JVM each: ScienceWorld, TextWorldExpress) kept for reuse in this
    process: an episode borrows one for itself alone and it comes back when the episode ends or is
    dropped, whatever ended it. A borrower loads its own case, which resets the engine's whole world."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make
        self._free: list[Any] = []
        self._lock = threading.Lock()

    def borrow(self) -> Any:
        with self._lock:
            if self._free:
                return self._free.pop()
        return self.make()

    def give_back(self, engine: Any) -> None:
        with self._lock:
            self._free.append(engine)

    def lend(self, owner: object) -> tuple[Any, Callable[[], None]]:
        """An engine for `owner` and the call that gives it back (at most once: again when `owner` is dropped)."""
        engine = self.borrow()
        return engine, weakref.finalize(owner, self.give_back, engine)


class EngineGenerator(SeededGameGenerator):
    """The prompt is a fresh game's first observation (and `instructions` after a blank line)."""

    make: Callable[[Identity], EngineGame]
    library: Callable[[], Any]  # loaded before the params are checked: a missing library is its one line
    instructions: str = ""

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> None:
        cls.library()
        super().check_params(params)

    def open(self, identity: Identity) -> EngineGame:
        return type(self).make(identity)

    def prompt(self, identity: Identity) -> str:
        game = self.open(identity)
        try:
            return f"{game.first}\n\n{self.instructions}" if self.instructions else game.first
        finally:
            game.finish()


class EngineInteraction(Interaction):
    """The loop over an `EngineGame`: each answer (with `action`, its last such line; an answer with
    none is a strike) is stepped in the engine, whose observation is the feedback."""

    make: Callable[[Identity], EngineGame]
    action: re.Pattern[str] | None = None  # None: the whole answer goes to the engine
    refusal: str = "Reply with one line `Action: <command>`."  # the feedback to an answer without one
    noun: str = "game"
    ended: str = "The game is over."  # before the reward, when the engine ends the game

    def start(self, identity: Identity) -> EngineGame:
        return type(self).make(identity)

    def respond(self, state: EngineGame, identity: Identity, assistant_text: str) -> InteractionResult:
        if state.done:
            return InteractionResult(terminate=True, feedback=f"The {self.noun} is over.", turn_score=state.score())
        text = assistant_text or ""
        found = self.action.findall(text) if self.action is not None else [text]
        if not found:
            state.strikes += 1
            if state.strikes >= STRIKES:
                state.finish()
                feedback = f"Too many answers without an action: the {self.noun} is over."
                return InteractionResult(terminate=True, feedback=feedback, turn_score=0.0, extra={"outcome": 0.0})
            return InteractionResult(terminate=False, feedback=self.refusal)
        observation = state.step(found[-1])
        if state.done:
            score = state.score()
            end = f"{observation}\n{self.ended} Your reward: {score:.2f}."
            return InteractionResult(terminate=True, feedback=end, turn_score=score, extra={"outcome": score})
        return InteractionResult(terminate=False, feedback=observation)

    def outcome(self, state: EngineGame, identity: Identity) -> RewardResult:
        """The episode's reward: the engine's win (not any text)."""
        return outcome_result(state.score())
