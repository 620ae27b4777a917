"""TextArena's card games for two: the seeded opponent's moves and the oracles (adapters/textarena.py
plays them, as it plays the games of _textarena_duels).

Each oracle plays from what seat 0 is shown, never from the hidden cards (its own face-down card in
Indian Poker, the other's hand and the deck in Briscola): tests/bootcamp/adapters/test_textarena_cards.py
re-deals the hidden cards and checks that the oracle's move does not change.
"""

from __future__ import annotations

from typing import Any

# ---------------------------------------------------------------------------------------- IndianPoker
# Five rounds; each player sees the other's card, never its own; ante 1, then check/bet, call/raise/fold;
# the higher card takes the pot at a showdown, the most chips after the last round wins.

_BETS = (1, 3, 10)  # the bet and raise sizes the opponent draws among (one of each size, so a draw
# is not nearly always a bet, as it would be among every amount up to its chips)


def _poker_to_call(env: Any, pid: int) -> int:
    gs = env.state.game_state
    return int(gs["highest_bet"] - gs["current_bets"][pid])


def _indian_poker_moves(env: Any) -> list[str]:
    to_call, chips = _poker_to_call(env, 1), env.state.game_state["player_chips"][1]
    if to_call == 0:
        return ["[check]", *(f"[bet {x}]" for x in _BETS if x <= chips)]
    raises = [f"[raise {x}]" for x in _BETS if to_call + x <= chips]
    return [*(["[call]"] if to_call <= chips else []), *raises, "[fold]"]


def _indian_poker(env: Any) -> str:
    """Seat 0's chance of holding the higher card, from the other's card alone (its own is a uniform
    draw of the 51 others): with a low card against it, bet and call; with a high one, check or fold."""
    gs = env.state.game_state
    rank = gs["player_cards"][1] % 13  # 0 for a 2 ... 12 for an ace: the card seat 0 is shown
    wins = 4 * (12 - rank) / 51  # the chance seat 0's unseen card is higher
    to_call, chips = _poker_to_call(env, 0), gs["player_chips"][0]
    if to_call == 0:
        return f"[bet {min(10, chips)}]" if wins > 0.6 and chips > 0 else "[check]"
    if wins > 0.6:
        return "[call]" if to_call <= chips else "[fold]"
    return "[call]" if wins > 0.45 and to_call <= 1 <= chips else "[fold]"


# ------------------------------------------------------------------------------------------- Briscola
# A 40-card deck, three cards in hand, no duty to follow suit; a trick goes to the highest trump, else
# the highest card of the suit led; the hands are refilled from the deck (its last card the trump shown
# face up); the most points (of 120) wins.


def _briscola_moves(env: Any) -> list[str]:
    return [f"[play {k + 1}]" for k in range(len(env.state.game_state["players"][1]["hand"]))]


def _briscola_beats(card: dict[str, Any], led: dict[str, Any], trump: str) -> bool:
    """Whether `card`, played second, takes the trick from `led` (BriscolaEnv._determine_trick_winner)."""
    if card["suit"] == led["suit"]:
        return bool(card["power"] > led["power"])
    return bool(card["suit"] == trump)


def _briscola(env: Any) -> str:
    """Second to play: take a trick worth taking with the cheapest card that does (spending a trump
    only for points), else throw the least worth. First to play: lead the least worth, a non-trump
    first (the uniform reply then takes it less often and with less)."""
    gs = env.state.game_state
    hand, trump, trick = gs["players"][0]["hand"], gs["trump_suit"], gs["current_trick"]

    def cost(card: dict[str, Any]) -> tuple[int, int, int]:  # what a card is worth keeping
        return (card["suit"] == trump, card["points"], card["power"])

    order = sorted(range(len(hand)), key=lambda k: cost(hand[k]))
    if trick:
        led = trick[0][1]
        takers = [k for k in order if _briscola_beats(hand[k], led, trump)]
        worth = led["points"] + min(hand[k]["points"] for k in order)
        cheap = [k for k in takers if hand[k]["suit"] != trump or led["points"] >= 4]
        if cheap and worth > 0:
            return f"[play {cheap[0] + 1}]"
    return f"[play {order[0] + 1}]" if hand else "[play 1]"


OPPONENTS = {"IndianPoker-v0": _indian_poker_moves, "Briscola-v0": _briscola_moves}
ORACLES = {"IndianPoker-v0": _indian_poker, "Briscola-v0": _briscola}
