"""TextArena's card games for two: the seeded opponent's moves and the oracles (adapters/textarena.py
plays them, as it plays the games of _textarena_duels).

Each oracle plays from what seat 0 is shown, never from the hidden cards (its own card in Indian Poker,
its face-down cards in Golf, the other's hand or grid and the deck in all):
tests/bootcamp/adapters/test_textarena_cards.py checks that none of them reaches seat 0's prompt,
re-deals them and checks that the oracle's move does not change.
"""

from __future__ import annotations

import types
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


# ----------------------------------------------------------------------------------------------- Golf
# Six cards each in two rows of three, two face up; a turn draws from the deck (then swaps the card
# into the grid, face up, or discards it) or takes the discard (then must swap it). A column of two
# equal values scores 0; the rest their values (A 1, J and Q 10, K 0); once a grid is all face up the
# other player has one more turn; the lower score wins (a tie goes to seat 0, the library's `min`).

_GOLF_UNSEEN = 75 / 13  # the mean value of a card not seen (A..10, J, Q, K)


def _golf_moves(env: Any) -> list[str]:
    gs = env.state.game_state
    if gs["turn_phase"] == "draw":
        return ["[draw]", *(["[take]"] if gs["discard_pile"] else [])]
    swaps = [f"[swap {r} {c}]" for r in (1, 2) for c in (1, 2, 3)]
    return swaps if gs.get("took_from_discard") else [*swaps, "[discard]"]


def _golf_grid(env: Any) -> list[int | None]:
    """Seat 0's six values as it sees them: None for a face-down card."""
    return [c["card"]["value"] if c["revealed"] else None for c in env.state.game_state["players"][0]["cards"]]


def _golf_score(grid: list[int | None]) -> float:
    """The expected score of a grid, a face-down card worth the mean of an unseen one."""
    total = 0.0
    for top, bottom in zip(grid[:3], grid[3:], strict=True):
        if top is not None and top == bottom:
            continue
        total += (_GOLF_UNSEEN if top is None else top) + (_GOLF_UNSEEN if bottom is None else bottom)
    return total


def _golf_best(grid: list[int | None], value: int) -> tuple[float, int]:
    """The expected score after the best swap of a card worth `value`, and its position, where a swap
    that turns the last card face up (ending the game) is taken only with a score that should win."""
    options = []
    for k in range(6):
        after = [*grid[:k], value, *grid[k + 1 :]]
        score = _golf_score(after)
        if None not in after and score > 12:
            score += 100.0  # ending the game on a high score: the other may well be lower
        options.append((score, k))
    return min(options)


def _golf(env: Any) -> str:
    """Take the discard when a swap of it lowers the expected score by 3 or more, else draw; swap a
    drawn card where it lowers the expected score most, or discard it when no swap lowers it."""
    gs = env.state.game_state
    grid, now = _golf_grid(env), _golf_score(_golf_grid(env))
    if gs["turn_phase"] == "draw":
        top = gs["discard_pile"][-1]["value"] if gs["discard_pile"] else None
        return "[take]" if top is not None and _golf_best(grid, top)[0] <= now - 3 else "[draw]"
    score, k = _golf_best(grid, gs["drawn_card"]["value"])
    if score >= now and not gs.get("took_from_discard"):
        return "[discard]"
    return f"[swap {k // 3 + 1} {k % 3 + 1}]"


# ---------------------------------------------------------------------------------------- GermanWhist
# Thirteen cards each, a trump suit, suit to follow when one can. While the deck lasts the trick's
# winner takes its face-up top card (shown to both) and the loser the next, face down; then the last
# thirteen tricks are played out; the most tricks (of 26) wins.


def _whist_legal(env: Any, pid: int) -> list[int]:
    gs = env.state.game_state
    hand, trick = gs["players"][pid]["hand"], gs["current_trick"]
    led = trick[0][1]["suit"] if trick else None
    follow = [k for k, card in enumerate(hand) if card["suit"] == led]
    return follow or list(range(len(hand)))


def _whist_moves(env: Any) -> list[str]:
    return [f"[play {k + 1}]" for k in _whist_legal(env, 1)]


def _whist_beats(card: dict[str, Any], led: dict[str, Any], trump: str) -> bool:
    """Whether `card`, played second, takes the trick from `led` (GermanWhistEnv._determine_trick_winner)."""
    if card["suit"] == led["suit"]:
        return bool(card["power"] > led["power"])
    return bool(card["suit"] == trump)


def _whist(env: Any) -> str:
    """Second to play: take the trick with the cheapest legal card that does when the trick is worth
    it (every trick once the deck is out; while it lasts, a face-up prize of a trump or a ten or more),
    else play the cheapest. First to play: lead the strongest card when the trick is worth it, else the
    cheapest."""
    gs = env.state.game_state
    hand, trump, trick, prize = gs["players"][0]["hand"], gs["trump_suit"], gs["current_trick"], gs["next_card"]
    legal = sorted(_whist_legal(env, 0), key=lambda k: (hand[k]["suit"] == trump, hand[k]["power"]))
    if not legal:
        return "[play 1]"
    worth = gs["phase"] != "learning" or prize is None or prize["suit"] == trump or prize["power"] >= 10
    if trick:
        takers = [k for k in legal if _whist_beats(hand[k], trick[0][1], trump)]
        return f"[play {(takers if worth and takers else legal)[0] + 1}]"
    return f"[play {(legal[-1] if worth else legal[0]) + 1}]"


# ------------------------------------------------------------------------------------------------ Tak
# Tak on 4x4 (15 stones and a capstone each): place a flat stone, wall or capstone on an empty cell,
# or move stacks; a road of own flat stones or capstones (the stack tops) joining opposite edges wins.
# Not a card game, but no hidden state and the same seat-1 plumbing. The opponent draws among every
# placement and one-piece move the library's own validators accept (stack splits left out); the
# oracle places flat stones only, on the cell that shortens its road most and the other's least.


def _tak_well_formed(allocation: Any) -> bool:
    """Cells of two whole numbers, each with a list of pieces named by at least one character."""
    return isinstance(allocation, dict) and bool(allocation) and all(
        isinstance(cell, tuple) and len(cell) == 2 and all(isinstance(x, int) for x in cell)
        and isinstance(pieces, list) and pieces and all(isinstance(p, str) and p for p in pieces)
        for cell, pieces in allocation.items()
    )  # fmt: skip


def _tak_valid_placement(env: Any, allocation: Any) -> bool:
    return _tak_well_formed(allocation) and bool(type(env)._is_valid_placement(env, allocation))


def _tak_valid_movement(env: Any, source: Any, allocation: Any) -> bool:
    return _tak_well_formed(allocation) and bool(type(env)._is_valid_movement(env, source, allocation))


def _tak_set_winner(state: Any, player_id: Any = None, reason: str = "", player_ids: Any = None) -> None:
    type(state).set_winner(state, player_ids if player_id is None else player_id, reason)


def mend_tak(env: Any) -> None:
    """Two gaps in the library's Tak. Its move checks compare whatever cells the answer names with
    numbers: a cell like (a,1) or (1,2,3), or an empty piece list, raised out of the library (a
    TypeError or ValueError: the episode crashed); such a move is refused here, an invalid move like
    any other, and the rest is the library's own check. And a finished road calls
    `set_winner(player_ids=...)`, a keyword its two-player state does not take (a TypeError: every
    won game crashed): the call is given its meaning, the library's win. Bound methods
    (`types.MethodType`), so a deep copy of the game carries them to the copy."""
    env._is_valid_placement = types.MethodType(_tak_valid_placement, env)
    env._is_valid_movement = types.MethodType(_tak_valid_movement, env)
    env.state.set_winner = types.MethodType(_tak_set_winner, env.state)


def _tak_marks(env: Any) -> tuple[tuple[str, ...], ...]:
    """The board as road marks: 'O' seat 0's flat or capstone on top, 'X' seat 1's, '#' a wall, ''."""

    def mark(stack: list[str]) -> str:
        if not stack:
            return ""
        top = stack[-1]
        return "#" if top[0] == "W" else "O" if top[-1] == "0" else "X"

    return tuple(tuple(mark(stack) for stack in row) for row in env.board)


def _tak_moves(env: Any) -> list[str]:
    n, board, pieces = env.board_size, env.board, env.players[1]
    kinds = [*(["F1", "W1"] if pieces["stones"] else []), *(["C1"] if pieces["capstones"] else [])]
    moves = [f"[place () {{({r},{c}): [{k}]}}]" for r in range(n) for c in range(n) if not board[r][c] for k in kinds]
    for r in range(n):
        for c in range(n):
            if board[r][c] and board[r][c][-1][-1] == "1":
                for tr, tc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                    if 0 <= tr < n and 0 <= tc < n and env._is_valid_movement((r, c), {(tr, tc): [board[r][c][-1]]}):
                        moves.append(f"[move ({r},{c}) {{({tr},{tc}): [{board[r][c][-1]}]}}]")
    return moves


def _tak(env: Any) -> str:
    """A flat stone where it finishes seat 0's road, else where it shortens that road most against
    the other's (blocking a road one stone from done first)."""
    from ptbench.bootcamp.adapters._textarena_duels import _tak_distance

    marks, n = _tak_marks(env), env.board_size
    empty = [(r, c) for r in range(n) for c in range(n) if not marks[r][c]]

    def score(cell: tuple[int, int]) -> tuple[int, int]:
        after = tuple(tuple("O" if (i, j) == cell else v for j, v in enumerate(row)) for i, row in enumerate(marks))
        mine, theirs = _tak_distance(after, "O"), _tak_distance(after, "X")
        return (0, 0) if mine == 0 else (1, mine - theirs + (8 if theirs <= 1 else 0))

    r, c = min(empty, key=score) if empty else (0, 0)
    return f"[place () {{({r},{c}): [F0]}}]"


OPPONENTS = {"IndianPoker-v0": _indian_poker_moves, "Briscola-v0": _briscola_moves, "Golf-v0": _golf_moves,
             "GermanWhist-v0": _whist_moves, "Tak-v0": _tak_moves}  # fmt: skip
ORACLES = {"IndianPoker-v0": _indian_poker, "Briscola-v0": _briscola, "Golf-v0": _golf, "GermanWhist-v0": _whist,
           "Tak-v0": _tak}  # fmt: skip
MENDS = {"Tak-v0": mend_tak}  # the library's rule gaps, closed before the first move
