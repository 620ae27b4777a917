"""POPGym's partially observable card games as multi-turn ptbench environments
(`pip install 'ptbench[bootcamp-popgym]'`).

One environment per game, `popgym.<game>`, at the library's Easy settings (one deck of 52), each a
POPGym environment that runs every step (ptbench renders its observation as text and turns the
model's move into its action):
- `repeat_first`: a card is dealt each turn; name the suit of the first card dealt (51 answers).
- `repeat_previous`: name the suit of the 4th most recent card, counting the one just dealt (k = 4).
- `autoencode`: watch 52 cards dealt one a turn, then recite their suits in reverse order.
- `count_recall`: a card and a query colour each turn; say how many cards of the query colour
  have been dealt so far.
- `concentration`: 52 cards face down; flip two a turn pair by pair, matched by colour, until every
  card is matched within the library's 103 flips.
A case is (game, seed): the library deals from the seed (`reset(seed=...)`). The reward is a win
read from the library's own rewards: the recall games pay a share per answer, right (+) or wrong
(-), and ptbench pays 1 only for a game with no wrong answer (it ends at the first); Concentration
pays 1 only when the library ends it with every card matched (not cut off at its flip limit).
**Oracle:** read from the environment's own state: the first card, the hand's k-th last card, the
dealt cards still to recite, the colour counts, and for Concentration the face-down colours.
Left out (`EXCLUDED`): HigherLower and MultiarmedBandit (chance: no player that sees only what the
model sees wins every game), Battleship and MineSweeper (families other sources already have), the
Labyrinths (mazelib, and maze walking is there already), the CartPole and Pendulum variants
(continuous control, no text task).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from types import ModuleType
from typing import Any

from ptbench.bootcamp.adapters import load_library
from ptbench.bootcamp.adapters.outcome import game_config
from ptbench.bootcamp.adapters.turns import STRIKES, Episode, TurnGenerator, TurnInteraction
from ptbench.bootcamp.api import Identity, register_generator, register_interaction

EXTRA = "bootcamp-popgym"
PREFIX = "popgym."
SOURCE = "popgym"
DOMAIN = "POPGym partially observable card games (multi-turn, rendered as text)"
# Concentration is TextArena's MemoryGame (bootcamp/families.py)
SAME_FAMILY = {"popgym.concentration": "ta.MemoryGame-v0"}
EXCLUDED = {
    "higher_lower": "chance: whether the next card is higher cannot be known from what was seen",
    "multiarmed_bandit": "chance: no player that sees only the payouts so far wins every game",
    "battleship": "Battleship is OpenSpiel's (spiel.battleship)",
    "minesweeper": "Minesweeper is GEM's and TextArena's already",
    "labyrinth_escape": "needs mazelib (built from source); maze walking is reasoning-gym's and MiniGrid's",
    "labyrinth_explore": "needs mazelib (built from source); maze walking is reasoning-gym's and MiniGrid's",
    "cartpole_pendulum": "the CartPole and Pendulum variants are continuous control: no text task",
}
SUITS = ("spades", "diamonds", "clubs", "hearts")  # the order of popgym's deck.SUITS ("s", "d", "c", "h")
COLOURS = ("black", "red")  # deck.COLORS ("b", "r")


def library() -> ModuleType:
    load_library("popgym", "POPGym", EXTRA)
    return load_library("popgym.envs", "POPGym", EXTRA)


def names() -> list[str]:
    library()
    return sorted(_GAMES)


def describe(name: str) -> dict[str, str]:
    return {"domain": "memory game (POPGym, partially observable)", "tools": "-", "levels": "Easy (one deck)"}


class CardGame(Episode):
    """One POPGym game; `env_class` names its Easy class. Subclasses render the observation, map a
    move to an action and read the oracle's answer from the environment's state."""

    env_class: str
    intro: str

    def __init__(self, identity: Identity) -> None:
        super().__init__()
        self.env = getattr(library(), self.env_class)()
        self.obs, _ = self.env.reset(seed=int(identity["seed"]))
        self.limit = int(getattr(self.env, "max_episode_length", 0) or self.env.episode_length)
        self.wrong = False  # a negative reward: a wrong answer (the recall games end there)
        self.ended = False  # the library ended the game itself (terminated)
        self.cut = False  # the library cut it off (truncated)

    def action(self, move: str) -> int:
        return SUITS.index(move)

    def legal(self) -> list[str]:
        return list(SUITS)

    def play(self, move: str) -> None:
        self.obs, reward, terminated, truncated, _ = self.env.step(self.action(move))
        self.wrong = self.wrong or float(reward) < 0
        self.ended, self.cut = bool(terminated), bool(truncated)

    def finished(self) -> bool:
        return self.ended or self.cut or self.wrong

    def won(self) -> bool:
        return self.ended and not self.cut and not self.wrong

    def board(self) -> str:
        k = int(getattr(self.env, "k", 0))
        return f"{self.intro.format(k=k, back=k - 1)}\n{self.observation()}"

    @abstractmethod
    def observation(self) -> str:
        """What the player sees this turn (the game's own rendering of its state)."""


class RepeatFirst(CardGame):
    env_class = "RepeatFirstEasy"
    intro = "Repeat first: each turn a card is dealt (you see its suit); answer the suit of the FIRST card dealt."

    def observation(self) -> str:
        return f"Card {self.moves_made + 1} dealt: {SUITS[int(self.obs)]}."

    def oracle_move(self) -> str | None:
        return SUITS[int(self.env.card)]


class RepeatPrevious(CardGame):
    env_class = "RepeatPreviousEasy"

    intro = ("Repeat previous: each turn a card is dealt (you see its suit); answer the suit of the card "
             "dealt {back} turns before the one just dealt. Until {k} cards are out no answer is scored "
             "(answer any suit).")  # fmt: skip

    def observation(self) -> str:
        return f"Card {self.moves_made + 1} dealt: {SUITS[int(self.obs)]}."

    def oracle_move(self) -> str | None:
        deck = self.env.deck
        hand = deck["player"]
        return SUITS[int(deck.suits_idx[hand[-self.env.k]])] if len(hand) >= self.env.k else SUITS[0]


class Autoencode(CardGame):
    env_class = "AutoencodeEasy"
    intro = ("Autoencode: 52 cards are dealt one a turn (you see each suit; answer `Move: next` while "
             "watching); then recite their suits in reverse order, the last card dealt first.")  # fmt: skip

    def watching(self) -> bool:
        return int(self.obs[0]) == 1  # popgym's Mode.WATCH

    def legal(self) -> list[str]:
        return ["next"] if self.watching() else list(SUITS)

    def action(self, move: str) -> int:
        return 0 if move == "next" else SUITS.index(move)

    def observation(self) -> str:
        dealt = len(self.env.deck["system"])
        if self.watching():
            return f"Watching: card {dealt} dealt: {SUITS[int(self.obs[1])]}."
        if dealt == self.env.deck.num_cards and self.moves_made < dealt:  # the last card, shown as play begins
            return f"Card {dealt} dealt: {SUITS[int(self.obs[1])]}. Now recite: the suit of card {dealt}?"
        return f"Recite: the suit of card {dealt}?"

    def oracle_move(self) -> str | None:
        if self.watching():
            return "next"
        deck = self.env.deck
        return SUITS[int(deck.suits_idx[deck["system"][-1]])]


class CountRecall(CardGame):
    env_class = "CountRecallEasy"
    intro = ("Count recall: each turn a card is dealt (you see its colour) and a colour is queried; "
             "answer how many cards of the queried colour have been dealt so far, this one included.")  # fmt: skip

    def legal(self) -> list[str]:
        return [str(n) for n in range(self.env.max_card_count + 1)]

    def action(self, move: str) -> int:
        return int(move)

    def observation(self) -> str:
        value, query = (int(x) for x in self.obs)
        return f"Dealt: {COLOURS[value]}. Query: how many {COLOURS[query]} cards so far?"

    def oracle_move(self) -> str | None:
        return str(int(self.env.counts[self.env.query]))


class Concentration(CardGame):
    env_class = "ConcentrationEasy"
    intro = ("Concentration: 52 cards lie face down at positions 1-52. Flip one card a turn; after every "
             "second flip, two cards of the same colour stay face up, any other pair turns face down again "
             "(flipping a card that is already face up loses the pair). Match every card within the flips "
             "left.")  # fmt: skip

    def legal(self) -> list[str]:
        return [str(p) for p in range(1, self.env.deck.num_cards + 1)]

    def action(self, move: str) -> int:
        return int(move) - 1

    def play(self, move: str) -> None:
        super().play(move)
        self.wrong = False  # a mismatched pair costs the library's share, not the game: only the end counts

    def observation(self) -> str:
        down = self.env.facedown_card
        up = [f"{p + 1}={COLOURS[int(v)]}" for p, v in enumerate(self.obs) if int(v) != down]
        return "Face up: " + (", ".join(up) if up else "none") + ". Every other card is face down."

    def oracle_move(self) -> str | None:
        """The face-down colours from the environment's state: flip the first card still down, then its match."""
        env = self.env
        taken = set(env.deck["face_up_idx"]) | set(env.deck["in_play_idx"])
        down = [p for p in range(env.deck.num_cards) if p not in taken]
        if env.deck["in_play_idx"]:
            colour = env.state[env.deck["in_play_idx"][0]]
            down = [p for p in down if env.state[p] == colour]
        return str(down[0] + 1) if down else None


_GAMES: dict[str, Callable[[Identity], CardGame]] = {
    "repeat_first": RepeatFirst,
    "repeat_previous": RepeatPrevious,
    "autoencode": Autoencode,
    "count_recall": CountRecall,
    "concentration": Concentration,
}


def make(identity: Identity) -> Episode:
    return _GAMES[PopGymGenerator.check(identity.get("game"))](identity)


@register_generator("popgym")
class PopGymGenerator(TurnGenerator):
    kind = "POPGym game"
    names = staticmethod(names)
    make = staticmethod(make)

    def intro(self, identity: Identity) -> str:
        return "Let's play a memory game."


@register_interaction("popgym")
class PopGymInteraction(TurnInteraction):
    make = staticmethod(make)


def bootcamp_dict(name: str, **splits: int) -> dict[str, Any]:
    game = PopGymGenerator.check(name)
    turns = 2 * 52 + STRIKES  # the longest game: Autoencode's 103 moves, Concentration's 103 flips
    return game_config(f"{PREFIX}{game}", "popgym", game, turns=turns, max_tokens=64, **splits)
