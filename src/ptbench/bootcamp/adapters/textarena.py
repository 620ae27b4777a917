"""TextArena's games as multi-turn ptbench environments (`pip install 'ptbench[bootcamp-textarena]'`).

Each game `ta.<Game>-v0` that runs with one player here, or with two where seat 1 is a seeded
uniform-random opponent the adapter moves (OPPONENTS), is an environment: the first observation
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
import copy
import functools
import io
import random
import types
from collections.abc import Callable
from functools import lru_cache
from types import ModuleType
from typing import Any

from ptbench.bootcamp.adapters import (
    _textarena_cards,
    _textarena_duels,
    _textarena_oracles,
    _textarena_puzzles,
    _textarena_santorini,
    _textarena_stratego,
    _textarena_tron,
    load_library,
)
from ptbench.bootcamp.adapters.outcome import game_config, outcome_result
from ptbench.bootcamp.adapters.turns import first_case
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

# the seeded opponents' legal moves and the oracles, by game: the first games in _textarena_oracles,
# later two-player games in _textarena_duels, _textarena_tron, _textarena_santorini and
# _textarena_stratego, the card games in _textarena_cards, the puzzle solvers in _textarena_puzzles
_SANTORINI, _STRATEGO = "SantoriniBaseFixed-v0", "Stratego-v0"
OPPONENTS = {**_textarena_oracles.OPPONENTS, **_textarena_duels.OPPONENTS, **_textarena_tron.OPPONENTS,
             **_textarena_cards.OPPONENTS, _SANTORINI: _textarena_santorini.opponent,
             _STRATEGO: _textarena_stratego.opponent}  # fmt: skip
ORACLES = {**_textarena_oracles.ORACLES, **_textarena_duels.ORACLES, **_textarena_tron.ORACLES,
           **_textarena_puzzles.ORACLES, **_textarena_cards.ORACLES,
           _SANTORINI: _textarena_santorini.oracle, _STRATEGO: _textarena_stratego.oracle}  # fmt: skip
# the library's gaps, closed right after the deal (before the first move)
MENDS = {**_textarena_cards.MENDS, _STRATEGO: _textarena_stratego.mend}

EXTRA = "bootcamp-textarena"
PREFIX = "ta."
SOURCE = "textarena"
DOMAIN = "TextArena games (multi-turn; two-player ones against a seeded random opponent)"
# Checked with this adapter: each resets with one player (or two: seat 1 the seeded opponent of
# OPPONENTS), plays to an end, and is deterministic per seed.
GAMES = (
    "2048-v0", "Alquerque-v0", "Blackjack-v0", "Briscola-v0", "Chopsticks-v0", "Countdown-v0", "Crusade-v0",
    "Cryptarithm-v0", "FifteenPuzzle-v0", "FrozenLake-v0", "GermanWhist-v0", "Golf-v0", "GuessTheNumber-v0",
    "HighSociety-v0", "IndianPoker-v0", "IteratedTwoThirdsAverage-v0", "IteratedUltimatumGame-v0", "LightsOut-v0",
    "LogicPuzzle-v0", "Mastermind-v0", "MemoryGame-v0", "Minesweeper-v0", "PegJump-v0", "QuantumTicTacToe-v0",
    "RushHour-v0", "SantoriniBaseFixed-v0", "Secretary-v0", "Set-v0", "SimpleTak-v0", "Slitherlink-v0", "Snake-v0",
    "Sokoban-v0", "Stratego-v0", "Sudoku-v0", "Surround-v0", "Tak-v0", "ThreeCardMonte-v0", "TowerOfHanoi-v0",
    "WildTicTacToe-v0",
)  # fmt: skip


# of a task family another environment is counted as (bootcamp/families.py); 2048 and Blackjack have no oracle
SAME_FAMILY = {"ta.FrozenLake-v0": "gym.frozen_lake", "ta.Countdown-v0": "rg.countdown",
               "ta.Cryptarithm-v0": "rg.cryptarithm", "ta.Sokoban-v0": "rg.sokoban", "ta.Sudoku-v0": "rg.sudoku",
               "ta.TowerOfHanoi-v0": "rg.tower_of_hanoi", "ta.LogicPuzzle-v0": "rg.zebra_puzzles",
               "ta.2048-v0": "spiel.2048", "ta.Blackjack-v0": "spiel.blackjack",
               "ta.SimpleTak-v0": "ta.Tak-v0", "ta.Mastermind-v0": "mastermind"}  # fmt: skip

# Left out, and why: by family (the registry's ids cut at "-v"), TextArena 0.7.4's 96 minus the 38 above.
_NLTK = "needs NLTK's word lists, downloaded at run time (no network on a compute node)"
_LLM = "needs an LLM judge or players (OpenRouter) or free-text talk no script can play"
_SPIEL = "a family OpenSpiel has (its adapter installs it; a family counts once)"
_PLAYERS = "three or more players"
EXCLUDED = {
    "Bandit": "the library pays the chosen button's regret: its step compares the button with the whole "
    "ground-truth dict, so choosing the best button scores 0 and the worst scores most",
    **dict.fromkeys(["Codenames", "DontSayIt", "Hangman", "LetterAuction", "SpellingBee", "WordChains",
                     "WordLadder", "WordSearch", "Wordle"], _NLTK),
    **dict.fromkeys(["Debate", "GuessWho", "ScenarioPlanning", "TwentyQuestions", "SimpleNegotiation",
                     "NewRecruit", "TruthAndDeception", "TwoDollar", "UsedCar", "UsedCarNegotiation",
                     "ScorableGames"], _LLM),
    **dict.fromkeys(["Battleship", "Breakthrough", "Checkers", "Chess", "ConnectFour", "KuhnPoker", "LiarsDice",
                     "Nim", "Othello", "TicTacToe", "UltimateTicTacToe", "PigDice", "LinesOfAction",
                     "GameOfPureStrategy", "ColonelBlotto", "Poker"], _SPIEL),
    **dict.fromkeys(["CharacterConclave", "SecretMafia", "SettlersOfCatan", "Taboo", "ThreePlayerGOPS",
                     "ThreePlayerIPD", "ThreePlayerTicTacToe"], _PLAYERS),
    **dict.fromkeys(["Klondike", "IteratedStagHunt", "ReverseTicTacToe", "UltimateTexasHoldem"],
                    "its module does not import on Python 3.11 (a SyntaxError in the library's env.py)"),
    "Crosswords": "GEM's adapter installs it (gem.Crosswords plays TextArena's game): a family counts once",
    "BabyAiText": "needs the old `gym` package (MiniGrid/BabyAI come from the MiniGrid adapter)",
    **dict.fromkeys(["IteratedPrisonersDilemma", "SimpleBlindAuction"],
                    "free-text conversation rounds before each decision: no seeded opponent can talk"),
    **dict.fromkeys(["PublicGoodsGame", "MarketEntryGame"], _PLAYERS + " (the registered default)"),
    **dict.fromkeys(["IteratedMatchingPennies", "IteratedRockPaperScissors"],
                    "against a uniform-random opponent every strategy wins a round with the same chance, so a "
                    "case the oracle wins would be a lucky seed, not a skill"),
    "SpiteAndMalice": "the 56-card stock runs out in about 20 turns, and then a player with an empty hand can "
    "only [draw], which the library never ends (its deadlock needs both hands empty): of 20 seeds a greedy "
    "whole-turn oracle won 1, 9 ended by the opponent's move bound and 10 ran past the 100 turns",
}  # fmt: skip


def library() -> ModuleType:
    return load_library("textarena", "TextArena", EXTRA)


def names() -> list[str]:
    return list(GAMES)


def check_game(name: Any) -> str:
    if name not in GAMES:
        raise UserError(f"TextArena game {name!r} is not one this adapter plays; `ptbench bootcamp list` shows them")
    return name


def describe(name: str) -> dict[str, str]:
    seats = "two players, against a seeded random one" if name in OPPONENTS else "single player"
    return {"domain": f"game (TextArena, {seats})", "tools": "-", "levels": "default"}


class Game:
    """One game in progress, with its own copy of the global RNG state."""

    def __init__(self, identity: Identity) -> None:
        self.seen = ""
        self.reward: float | None = None
        if identity["game"] in SLOW_DEAL:
            self.env, self.rng_state = _dealt(check_game(identity["game"]), int(identity["seed"]))
            self.env, self.opponent = copy.deepcopy(self.env), None
            return
        self.rng_state = random.Random(int(identity["seed"])).getstate()
        self.env = self._call(lambda: library().make(check_game(identity["game"])))
        self.opponent = OPPONENTS.get(identity["game"])
        seats = 1 if self.opponent is None else 2
        self._call(lambda: self.env.reset(num_players=seats, seed=int(identity["seed"])))
        if identity["game"] == "FifteenPuzzle-v0":
            _mend_fifteen(_core(self).state)
        if identity["game"] in MENDS:
            MENDS[identity["game"]](_core(self))
        if self.opponent is not None and _core(self).state.current_player_id == 1:
            # a game that deals seat 1 the first move (Indian Poker): it moves before seat 0's first
            # prompt, else that prompt would be what seat 1 is shown (seat 0's own hidden card)
            self._replies(False)

    def _call(self, fn: Callable[[], Any]) -> Any:
        outside = random.getstate()
        random.setstate(self.rng_state)
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # some games print their boards
                return fn()
        finally:
            self.rng_state = random.getstate()
            random.setstate(outside)

    def _answer(self, moves: list[str]) -> Any:
        """The opponent's move: a uniform draw (inside `_call`, from this game's own RNG)."""
        return self.env.step(action=random.choice(moves))

    def news(self) -> str:
        """What the game says now that it had not said before."""
        _, observation = self._call(self.env.get_observation)
        text = observation if isinstance(observation, str) else str(observation)
        new = text[len(self.seen) :] if text.startswith(self.seen) else text
        self.seen = text
        return new.strip()

    def step(self, action: str) -> bool:
        done, _ = self._call(lambda: self.env.step(action=action))
        opponent = self.opponent
        if opponent is not None and not done and _core(self).state.game_info[0].get("invalid_move"):
            # a many-seat state (Santorini's) marks seat 0 out after its allowance of refused moves but
            # plays on, skipping seat 0 for good (the opponent would then move alone, or forever once
            # it too is out): the episode ends there, as the lost game it is
            self.reward = 0.0
            return True
        return self._replies(done)

    def _replies(self, done: bool) -> bool:
        """The opponent's moves while the turn is its own; then, at the end, the reward."""
        opponent, drawn = self.opponent, 0
        while opponent is not None and not done and _core(self).state.current_player_id == 1:
            if drawn == OPPONENT_MOVES:
                self.reward = 0.0  # the opponent never hands the turn back: no game seat 0 can win
                return True
            # the seeded opponent: a uniform draw among its legal moves, from this game's own RNG; with
            # none (a Quantum Tic Tac Toe board one cell short of a move) it answers nothing, as a
            # player would, and the library rules on that
            done, _ = self._call(functools.partial(self._answer, opponent(_core(self)) or [""]))
            drawn += 1
        if done:
            rewards, info = self._call(self.env.close)
            value = (rewards or {}).get(0, 0.0) if isinstance(rewards, dict) else 0.0
            mine = (info or {}).get(0, {}) if isinstance(info, dict) else {}
            if isinstance(mine, dict) and mine.get("invalid_move"):
                value = 0.0  # a game ended by a malformed or illegal move pays nothing, whatever progress it counts
            # some games put the reason of an invalid move where the reward goes: no number, no reward
            self.reward = min(1.0, max(0.0, float(value))) if isinstance(value, int | float) else 0.0
        return bool(done)


def _award(state: Any, player_ids: list[int], reason: str) -> None:
    state.set_outcome(1.0 if player_ids == [0] else 0.0, reason)


def _mend_fifteen(state: Any) -> None:
    """FifteenPuzzle ends a solved board with the two-player call `set_winners`, which its
    single-player state lacks (an AttributeError: a solved puzzle crashed the episode). The call is
    given the single-player meaning, the library's full reward for a win; the test of solved is still
    the library's own."""
    if not hasattr(state, "set_winners"):
        state.set_winners = types.MethodType(_award, state)


OPPONENT_MOVES = 200  # the opponent's moves in a row at most (MemoryGame's matches give it up to 8)


# Games whose deal takes the library a second or so (it searches layouts until one is solvable): an
# episode starts from a copy of the dealt game, kept per (game, seed), instead of dealing again (the
# verification and a rollout build the same case several times). The copy is the same game, RNG included.
SLOW_DEAL = frozenset({"RushHour-v0", "Sokoban-v0"})


@lru_cache(maxsize=64)
def _dealt(name: str, seed: int) -> tuple[Any, Any]:
    game = Game.__new__(Game)
    game.rng_state = random.Random(seed).getstate()
    game.env = game._call(lambda: library().make(name))
    game._call(lambda: game.env.reset(num_players=1, seed=seed))
    return game.env, game.rng_state


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
        if self.game not in WINNABLE_ONLY:
            return {"game": self.game, "seed": rng.getrandbits(31)}
        return first_case(
            lambda: {"game": self.game, "seed": rng.getrandbits(31)}, oracle_wins, self.game, "the oracle won none"
        )

    def prompt(self, identity: Identity) -> str:
        return Game(identity).news()

    def dedup_key(self, identity: Identity) -> str:
        return f"{identity['game']}/{identity['seed']}"


# ----------------------------------------------------------------------------------------- oracles
# Each reads the game's own state (the library's secret or solution where it keeps one, else a solver
# on the board) and answers the next move in the game's own action format; `bootcamp verify` plays them.


def _core(game: Game) -> Any:
    """The game under TextArena's wrappers."""
    env = game.env
    while hasattr(env, "env"):
        env = env.env
    return env


# Games whose generator can deal a case nobody can win (a Countdown target no expression makes, a Rush
# Hour or Sokoban layout with no way out within the turns): a case is a seed the oracle wins, as the
# PettingZoo and Gymnasium adapters keep theirs (`turns.winnable_seed`). Deterministic in the case's rng.
WINNABLE_ONLY = frozenset({"Countdown-v0", "FifteenPuzzle-v0", "RushHour-v0", "Sokoban-v0", *OPPONENTS})
ORACLE_TURNS = 100  # the turn limit of `bootcamp_dict`
# games given more turns: Stratego's armies start six rows apart (the library sets no bound; its mend
# ends the game as a draw at 400 moves of both seats, 200 of seat 0's)
TURNS_FOR = {_STRATEGO: 200}


def oracle_wins(identity: Identity) -> bool:
    """Play the oracle through a whole game of `identity`: whether it scores 1."""
    game, play = Game(identity), ORACLES[identity["game"]]
    for _ in range(TURNS_FOR.get(identity["game"], ORACLE_TURNS)):
        if game.step(play(_core(game))):
            return (game.reward or 0.0) >= 1.0
    return False


@register_interaction("textarena")
class TextArenaInteraction(Interaction):
    def start(self, identity: Identity) -> Game:
        game = Game(identity)
        game.news()  # the first observation is the prompt
        return game

    def oracle(self, state: Game, identity: Identity) -> str | None:
        play = ORACLES.get(identity["game"])
        return None if play is None else play(_core(state))

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
    return game_config(
        f"{PREFIX}{check_game(game)}",
        "textarena",
        game,
        turns=TURNS_FOR.get(game, ORACLE_TURNS),
        max_tokens=512,
        **splits,
    )
