"""RLCard's card games that no other installed source has, as multi-turn ptbench environments
(`pip install 'ptbench[bootcamp-rlcard]'`): `rlcard.uno` (two seats) and `rlcard.mahjong` (four).

The model holds one seat (the case's) against seeded uniform-random players drawing among their legal
actions. Every user turn shows what that seat may see, never another hand or the deck (`view`): its
own hand, the public table (UNO: the card to match, each hand's size, the draw pile's size; Mahjong:
the discards, every player's declared melds, the wall's size) and what the others did since, then its
legal actions; the model answers `Move: <action>` with one of them. An answer that names none is
refused with the list, and the third ends the game at 0. The reward is the library's payoff for the
seat scaled from [-1, 1] to [0, 1] (UNO: the winner 1, the other 0; Mahjong: the winner 1, the others
0, a drawn game, the wall used up, 0.5 for all); an unfinished game (the turn limit came first) scores 0.

Determinism: RLCard's games draw every shuffle and every colour a drawn wild card takes from the
game's own `np_random`; each episode builds its own game with its own `numpy.random.RandomState(seed)`
and its own `random.Random` for the opponents, so an episode is a pure function of its case (game,
seed, seat) and the model's moves, whatever else runs in the process.
"""

from __future__ import annotations

import random
import re
from types import ModuleType
from typing import Any

from ptbench.bootcamp.adapters import load_library
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

EXTRA = "bootcamp-rlcard"
PREFIX = "rlcard."
SOURCE = "rlcard"
DOMAIN = "RLCard card games (multi-turn, one seat against seeded random players)"
STRIKES = 3  # answers naming no legal action before the game counts as lost
TURNS = 300  # model turns an episode may take (UNO: 5,000 random games took at most 339 moves of both seats)
_MOVE = re.compile(r"^\s*move\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
GAMES = ("mahjong", "uno")
_SPIEL = "a family OpenSpiel has (spiel.{}): a family counts once"
# UNO is a relative of OpenSpiel's crazy_eights (its use_special_cards option): not a new family.
SAME_FAMILY = {"rlcard.uno": "spiel.crazy_eights"}
EXCLUDED = {
    "blackjack": _SPIEL.format("blackjack"),
    "bridge": _SPIEL.format("bridge"),
    "doudizhu": _SPIEL.format("dou_dizhu"),
    "gin-rummy": _SPIEL.format("gin_rummy"),
    "leduc-holdem": _SPIEL.format("leduc_poker"),
    "limit-holdem": _SPIEL.format("universal_poker, whose default is limit hold'em"),
    "no-limit-holdem": _SPIEL.format("universal_poker"),
}
_RULES = {
    "uno": (
        "Let's play UNO (RLCard's rules, two players). Cards are colour-value: colours r, g, b, y; values 0-9, "
        "skip, reverse, draw_2, and the wild cards wild and wild_draw_4. Play a card of the colour or the value "
        "of the card to match; a wild card names its colour as you play it (`g-wild` plays a wild card as "
        "green); wild_draw_4 only when no other card fits; `draw` when nothing fits (a drawn card that fits is "
        "played at once). The first to empty their hand wins."
    ),
    "mahjong": (
        "Let's play Mahjong (RLCard's simplified rules, four players, no scoring). Tiles are suit-value: dots, "
        "bamboo and characters 1-9, dragons green/red/white, winds east/west/north/south. On your turn you have "
        "drawn a tile: discard one. When a discard lets you pong (you hold two "
        "of it), gong (three) or chow (a run with two of yours) you may declare it or `stand`. A hand wins "
        "with four sets (three of a kind or a run of one suit) and a pair, or with four declared melds. "
        "When the wall is empty the game is drawn."
    ),
}


def library() -> ModuleType:
    return load_library("rlcard", "RLCard", EXTRA)


def names() -> list[str]:
    return list(GAMES)


def check_game(name: Any) -> str:
    if not isinstance(name, str) or name not in GAMES:
        why = EXCLUDED.get(name) if isinstance(name, str) else None
        hint = f" (left out: {why})" if why else ""
        raise UserError(f"RLCard has no game {name!r} that ptbench plays{hint}; `ptbench bootcamp list` shows them")
    return name


def describe(name: str) -> dict[str, str]:
    return {"domain": "card game (RLCard, against seeded random players)", "tools": "-", "levels": "default"}


def _uno_card(card: Any) -> str:
    """A card as the view names it: a wild card in a hand has no colour yet (the library keeps a
    made-up one in `str`), a played one the colour it was given."""
    return card.trait if card.type == "wild" else f"{card.color}-{card.trait}"


def _tile(card: Any) -> str:
    return str(card.get_str())


class Match:
    """One game in progress: the library's game, the seat, the opponents' RNG, strikes, the news."""

    def __init__(self, identity: Identity) -> None:
        import numpy as np

        library()
        self.name, self.seat = check_game(identity["game"]), int(identity["player"])
        if self.name == "uno":
            from rlcard.games.uno.game import UnoGame

            self.game: Any = UnoGame()
        else:
            from rlcard.games.mahjong.game import MahjongGame

            self.game = MahjongGame()
        self.game.np_random = np.random.RandomState(int(identity["seed"]) % 2**32)
        self.game.init_game()
        self.rng = random.Random(f"rlcard:{self.name}:{identity['seed']}")
        self.strikes, self.lost_by_strikes = 0, False
        self.news: list[str] = []
        self.advance()

    # ---------------------------------------------------------------------------------- the rules
    def over(self) -> bool:
        return bool(self.game.is_over())

    def current(self) -> int:
        return int(self.game.round.current_player)

    def actions(self) -> dict[str, Any]:
        """The player to move's legal actions: the text the model gives -> what the library plays."""
        if self.name == "uno":
            return {a: a for a in self.game.get_legal_actions()}
        state = self.game.get_state(self.current())
        found: dict[str, Any] = {}
        for action in self.game.get_legal_actions(state):
            found.setdefault(action if isinstance(action, str) else _tile(action), action)
        return found

    def apply(self, text: str) -> None:
        who = "You" if self.current() == self.seat else f"Player {self.current()}"
        if self.name == "mahjong" and text == "stand":
            line = None if who != "You" else "You stand."  # another's stand would tell what it holds
        elif text in ("draw", "pong", "gong", "chow"):
            line = f"{who}: {text}."
        else:
            line = f"{who} played {text}." if self.name == "uno" else f"{who} discarded {text}."
        self.game.step(self.actions()[text])
        if line:
            self.news.append(line)

    def advance(self) -> None:
        """The other seats' moves (uniform among their legal actions) until the seat is to move or the game ends."""
        while not self.over() and self.current() != self.seat:
            self.apply(self.rng.choice(sorted(self.actions())))

    def score(self) -> float:
        if self.lost_by_strikes or not self.over():
            return 0.0
        if self.name == "uno":
            winner = self.game.round.winner
            payoff = 0 if not winner or len(winner) != 1 else (1 if winner[0] == self.seat else -1)
        else:
            _, winner, _ = self.game.judger.judge_game(self.game)
            payoff = 0 if winner == -1 else (1 if winner == self.seat else -1)
        return (payoff + 1) / 2

    # ---------------------------------------------------------------------------------- the view
    def table(self) -> str:
        """What the seat may see: its own hand and the public table, nothing of another hand or the deck."""
        game, seat = self.game, self.seat
        if self.name == "uno":
            sizes = ", ".join(("you" if i == seat else f"player {i}") + f" {len(p.hand)}" for i, p in
                              enumerate(game.players))  # fmt: skip
            target = game.round.target
            return (f"Your hand: {' '.join(sorted(_uno_card(c) for c in game.players[seat].hand))}\n"
                    f"Card to match: {target.color}-{target.trait}\nCards in hand: {sizes}\n"
                    f"Draw pile: {len(game.dealer.deck)} cards")  # fmt: skip
        melds = "\n".join(("  you: " if p.player_id == seat else f"  player {p.player_id}: ")
                          + ("; ".join(" ".join(_tile(c) for c in meld) for meld in p.pile) or "none")
                          for p in game.players)  # fmt: skip
        table = game.dealer.table
        return (f"Your hand: {' '.join(sorted(_tile(c) for c in game.players[seat].hand))}\n"
                f"Declared melds:\n{melds}\n"
                f"Discards on the table, oldest first: {' '.join(_tile(c) for c in table) or 'none'}\n"
                f"Tiles left in the wall: {len(game.dealer.deck)}")  # fmt: skip

    def view(self) -> str:
        since = "\n".join(self.news) or "(nothing yet)"
        self.news = []
        moves = ", ".join(sorted(self.actions()))
        return (f"Since your last move:\n{since}\n{self.table()}\n"
                f"Your legal moves: {moves}\nReply with one line `Move: <move>`.")  # fmt: skip

    def legal_view(self) -> str:
        moves = ", ".join(sorted(self.actions()))
        return f"{self.table()}\nYour legal moves: {moves}\nReply with one line `Move: <move>`."


@register_generator("rlcard")
class RLCardGenerator(Generator):
    """Params: game (uno or mahjong). A case is (game, seed, the model's seat)."""

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.game = check_game(params.get("game"))

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> None:
        check_game(params.get("game"))

    def case(self, rng: random.Random) -> Identity:
        """A seed and seat whose game gives the model a move (the outcome of a game it never played
        would be paid to any answer)."""
        seats = 2 if self.game == "uno" else 4
        return first_case(
            lambda: {"game": self.game, "seed": rng.getrandbits(32), "player": rng.randrange(seats)},
            lambda identity: not Match(identity).over(),
            f"{PREFIX}{self.game}",
            "the model's seat moved in none",
        )

    def prompt(self, identity: Identity) -> str:
        match = Match(identity)
        return f"{_RULES[match.name]}\nYou are player {match.seat}.\n" + match.view()

    def dedup_key(self, identity: Identity) -> str:
        return f"{identity['game']}/{identity['seed']}/{identity['player']}"


@register_interaction("rlcard")
class RLCardInteraction(Interaction):
    oracle_wins = False  # the seeded random players and the deal can beat any player

    def start(self, identity: Identity) -> Match:
        match = Match(identity)
        match.news = []  # the prompt showed them
        return match

    def oracle(self, state: Match, identity: Identity) -> str | None:
        """A legal seeded player: the last card when it empties the hand (UNO), a meld when one is
        offered (Mahjong: four melds win), else a seeded random legal action."""
        if state.over():
            return "Move: (the game is over)"
        moves = sorted(state.actions())
        if state.name == "uno" and len(state.game.players[state.seat].hand) == 1 and moves != ["draw"]:
            return f"Move: {moves[0]}"
        melds = [m for m in moves if m in ("pong", "gong", "chow")]
        if melds:
            return f"Move: {melds[0]}"
        rng = random.Random(f"oracle:{identity['seed']}:{len(state.game.dealer.deck)}:{len(moves)}")
        return f"Move: {rng.choice(moves)}"

    def respond(self, state: Match, identity: Identity, assistant_text: str) -> InteractionResult:
        if state.over():
            return InteractionResult(terminate=True, feedback="The game is over.", turn_score=state.score())
        found = _MOVE.findall(assistant_text or "")
        moves = state.actions()
        move = found[-1] if found else None
        if move is not None and move not in moves:  # forgive case and spacing, nothing else
            move = next((m for m in moves if m.replace(" ", "").lower() == move.replace(" ", "").lower()), None)
        if move is None or move not in moves:
            state.strikes += 1
            if state.strikes >= STRIKES:
                state.lost_by_strikes = True
                return InteractionResult(terminate=True, feedback="Too many invalid moves: you lose.", turn_score=0.0,
                                         extra={"valid": False, "outcome": 0.0})  # fmt: skip
            return InteractionResult(terminate=False, feedback="That is not one of your legal moves.\n"
                                     + state.legal_view(), extra={"valid": False})  # fmt: skip
        state.apply(move)
        state.advance()
        if state.over():
            score = state.score()
            return InteractionResult(terminate=True, feedback=f"Game over. Your result: {score:.2f} (0 loss … 1 win).",
                                     turn_score=score, extra={"valid": True, "outcome": score})  # fmt: skip
        return InteractionResult(terminate=False, feedback=state.view(), extra={"valid": True})

    def outcome(self, state: Match, identity: Identity) -> RewardResult:
        """The episode's reward: the library's payoff for the model's seat (not any text)."""
        return outcome_result(state.score())


def bootcamp_dict(game: str, **splits: int) -> dict[str, Any]:
    return game_config(f"{PREFIX}{check_game(game)}", "rlcard", game, turns=TURNS, max_tokens=256, **splits)
