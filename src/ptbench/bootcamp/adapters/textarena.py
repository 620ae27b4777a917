"""TextArena's single-player games as multi-turn ptbench environments (`pip install 'ptbench[bootcamp-textarena]'`).

Each game `ta.<Game>-v0` that runs with one player here is an environment: the first observation
is the user turn, every later one (only what is new since the last) is the feedback, and the game
decides when it ends and what it pays; its reward for player 0, clamped to [0, 1], is the episode's
reward (through `Interaction.outcome`: text alone proves nothing).

Determinism: TextArena draws from the *global* `random` (seeded by `reset(seed=…)`). Episodes run
concurrently in one process, so each episode keeps its own copy of the global RNG state: it is put
in place before every call into the game and taken back after, which makes an episode a pure
function of its case (game, seed) and the model's moves. Games that fetch data from the network at
run time (NLTK word lists) cannot run on an offline node and are left out.
"""

from __future__ import annotations

import contextlib
import io
import random
from collections.abc import Callable
from types import ModuleType
from typing import Any

from ptbench.bootcamp.adapters import load_library
from ptbench.bootcamp.adapters.outcome import game_config, outcome_result
from ptbench.bootcamp.api import (
    Generator,
    Identity,
    Interaction,
    InteractionResult,
    RewardResult,
    register_generator,
    register_interaction,
)
from ptbench.core.errors import UserError

EXTRA = "bootcamp-textarena"
PREFIX = "ta."
SOURCE = "textarena"
DOMAIN = "TextArena single-player games (multi-turn)"
# Checked with this adapter: each resets with one player, plays to an end, and is deterministic per seed.
GAMES = (
    "2048-v0", "Bandit-v0", "Blackjack-v0", "Countdown-v0", "Cryptarithm-v0", "FifteenPuzzle-v0",
    "FrozenLake-v0", "GuessTheNumber-v0", "LightsOut-v0", "LogicPuzzle-v0", "Mastermind-v0",
    "Minesweeper-v0", "PegJump-v0", "RushHour-v0", "Secretary-v0", "Set-v0", "Slitherlink-v0",
    "Sokoban-v0", "Sudoku-v0", "ThreeCardMonte-v0", "TowerOfHanoi-v0",
)  # fmt: skip


def library() -> ModuleType:
    return load_library("textarena", "TextArena", EXTRA)


def names() -> list[str]:
    return list(GAMES)


def check_game(name: Any) -> str:
    if name not in GAMES:
        raise UserError(f"TextArena game {name!r} is not one this adapter plays; `ptbench bootcamp list` shows them")
    return name


def describe(name: str) -> dict[str, str]:
    return {"domain": "game (TextArena, single player)", "tools": "-", "levels": "default"}


class Game:
    """One game in progress, with its own copy of the global RNG state."""

    def __init__(self, identity: Identity) -> None:
        self.rng_state = random.Random(int(identity["seed"])).getstate()
        self.seen = ""
        self.reward: float | None = None
        self.env = self._call(lambda: library().make(check_game(identity["game"])))
        self._call(lambda: self.env.reset(num_players=1, seed=int(identity["seed"])))

    def _call(self, fn: Callable[[], Any]) -> Any:
        outside = random.getstate()
        random.setstate(self.rng_state)
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # some games print their boards
                return fn()
        finally:
            self.rng_state = random.getstate()
            random.setstate(outside)

    def news(self) -> str:
        """What the game says now that it had not said before."""
        _, observation = self._call(self.env.get_observation)
        text = observation if isinstance(observation, str) else str(observation)
        new = text[len(self.seen) :] if text.startswith(self.seen) else text
        self.seen = text
        return new.strip()

    def step(self, action: str) -> bool:
        done, _ = self._call(lambda: self.env.step(action=action))
        if done:
            rewards, info = self._call(self.env.close)
            value = (rewards or {}).get(0, 0.0) if isinstance(rewards, dict) else 0.0
            mine = (info or {}).get(0, {}) if isinstance(info, dict) else {}
            if isinstance(mine, dict) and mine.get("invalid_move"):
                value = 0.0  # a game ended by a malformed or illegal move pays nothing, whatever progress it counts
            # some games put the reason of an invalid move where the reward goes: no number, no reward
            self.reward = min(1.0, max(0.0, float(value))) if isinstance(value, int | float) else 0.0
        return bool(done)


@register_generator("textarena")
class TextArenaGenerator(Generator):
    """Params: game (a TextArena id this adapter plays). A case is (game, seed)."""

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.game = check_game(params.get("game"))

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> None:
        library()
        check_game(params.get("game"))

    def case(self, rng: random.Random) -> Identity:
        return {"game": self.game, "seed": rng.getrandbits(31)}

    def prompt(self, identity: Identity) -> str:
        return Game(identity).news()

    def dedup_key(self, identity: Identity) -> str:
        return f"{identity['game']}/{identity['seed']}"


@register_interaction("textarena")
class TextArenaInteraction(Interaction):
    def start(self, identity: Identity) -> Game:
        game = Game(identity)
        game.news()  # the first observation is the prompt
        return game

    def respond(self, state: Game, identity: Identity, assistant_text: str) -> InteractionResult:
        if state.reward is not None:
            return InteractionResult(terminate=True, feedback="The game is over.", turn_score=state.reward)
        done = state.step(assistant_text or "")
        if done:
            return InteractionResult(terminate=True, feedback=f"Game over. Your reward: {state.reward:.2f}.",
                                     turn_score=state.reward or 0.0, extra={"outcome": state.reward})  # fmt: skip
        return InteractionResult(terminate=False, feedback=state.news() or "(no change)")

    def outcome(self, state: Game, identity: Identity) -> RewardResult:
        score = state.reward or 0.0  # an unfinished game (the turn limit came first) scores 0
        return outcome_result(score)


def bootcamp_dict(game: str, **splits: int) -> dict[str, Any]:
    return game_config(f"{PREFIX}{check_game(game)}", "textarena", game, turns=100, max_tokens=512, **splits)
