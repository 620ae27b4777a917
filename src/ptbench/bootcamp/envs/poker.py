"""Poker decisions: heads-up fixed-limit hold'em spots played out by pokerkit against a fixed, seeded opponent.

A case is a match of duplicate deals: each deal is played twice with the seats' cards swapped, so luck
of the cards cancels. In every spot the model (hero) chooses fold, call or raise; after that hero
checks/calls down and the opponent follows its fixed rule. The reward replays every decision on the
engine and scores chips won: (model - worst) / (best - worst) over the match, where best/worst are the
chips of the best/worst choice per spot given the hidden cards. Extra: `ptbench[bootcamp-poker]`.
"""

from __future__ import annotations

import random
import re
from typing import Any

from ptbench.bootcamp.api import (
    Generator,
    Identity,
    RewardCalculator,
    Tool,
    ToolResult,
    register_generator,
    register_reward,
    register_tool,
)

RANKS, SUITS = "23456789TJQKA", "cdhs"
DECK = [r + s for r in RANKS for s in SUITS]
ACTIONS = ("fold", "call", "raise")
STREETS = {"preflop": 0, "flop": 3, "turn": 4}


def _state() -> Any:
    from pokerkit import Automation, FixedLimitTexasHoldem

    autos = (
        Automation.ANTE_POSTING,
        Automation.BET_COLLECTION,
        Automation.BLIND_OR_STRADDLE_POSTING,
        Automation.HOLE_CARDS_SHOWING_OR_MUCKING,
        Automation.HAND_KILLING,
        Automation.CHIPS_PUSHING,
        Automation.CHIPS_PULLING,
    )
    return FixedLimitTexasHoldem.create_state(autos, True, 0, (1, 2), 2, 4, 200, 2)


def strength(hole: list[str], board: list[str]) -> int:
    """The opponent's rule of thumb: 2 strong, 1 medium, 0 weak (made hand on the board, or preflop cards)."""
    ranks = [RANKS.index(c[0]) for c in hole]
    if not board:
        return 2 if ranks[0] == ranks[1] or min(ranks) >= 9 else 1 if max(ranks) >= 10 else 0
    from pokerkit import StandardHighHand

    label = str(StandardHighHand.from_game("".join(hole), "".join(board)).entry.label)
    return 0 if "HIGH_CARD" in label else 1 if "ONE_PAIR" in label else 2


def play(deal: dict[str, Any], action: str | None) -> int:
    """Hero's chips won in this spot when it takes `action` at the decision point (None: stop there and
    return the state description instead; see `describe`)."""
    s = _state()
    hero, street = deal["hero"], STREETS[deal["street"]]
    holes = [deal["holes"][0], deal["holes"][1]]
    s.deal_hole("".join(holes[0]))
    s.deal_hole("".join(holes[1]))
    board: list[str] = []
    decided = False
    rng = random.Random(deal["opponent_seed"])
    while s.status:
        if s.can_burn_card():
            s.burn_card("??")  # burnt cards are unseen: the deal's own cards stay in order
            continue
        if s.can_deal_board():
            n = 3 if not board else 1
            cards = deal["board"][len(board) : len(board) + n]
            s.deal_board("".join(cards))
            board += cards
            continue
        actor = s.actor_index
        at_spot = len(board) == street and not decided
        if actor == hero:
            if at_spot:
                decided = True
                if action == "fold" and s.can_fold():
                    s.fold()
                elif action == "raise" and s.can_complete_bet_or_raise_to():
                    s.complete_bet_or_raise_to()
                else:
                    s.check_or_call()
            else:
                s.check_or_call()
        elif len(board) < street or (len(board) == street and not decided):
            s.check_or_call()  # the scripted prefix: both players check/call until hero's decision
        else:
            level = strength(holes[actor], board)
            facing = s.checking_or_calling_amount > 0
            if level == 2 and s.can_complete_bet_or_raise_to():
                s.complete_bet_or_raise_to()
            elif facing and level == 0 and rng.random() < 0.6:
                s.fold()
            else:
                s.check_or_call()
    return int(s.payoffs[hero])


def spot_text(i: int, deal: dict[str, Any]) -> str:
    street = STREETS[deal["street"]]
    seat = "small blind (acts first preflop)" if deal["hero"] == 1 else "big blind"
    board = " ".join(deal["board"][:street]) or "none yet"
    prefix = "" if street == 0 else " Preflop both players called/checked; on this street nobody has bet yet."
    return f"Spot {i}: you are the {seat}; your cards {' '.join(deal['holes'][deal['hero']])}; board {board}.{prefix}"


@register_generator("poker_decisions")
class PokerDecisions(Generator):
    """Params: deals (duplicate deals, 2 spots each), street (preflop | flop | turn)."""

    requires = (("pokerkit", "bootcamp-poker"),)

    def case(self, rng: random.Random) -> Identity:
        deals = []
        street = self.params.get("street", "preflop")
        for _ in range(int(self.params.get("deals", 2))):
            cards = rng.sample(DECK, 9)
            holes, board, seed = [cards[0:2], cards[2:4]], cards[4:9], rng.getrandbits(32)
            for hero in (0, 1):  # duplicate: the same cards from both seats
                deals.append({"holes": holes, "board": board, "hero": hero, "street": street, "opponent_seed": seed})
        chips = [{a: play(d, a) for a in ACTIONS} for d in deals]
        return {"deals": deals, "chips": chips}

    def prompt(self, identity: Identity) -> str:
        spots = "\n".join(spot_text(i + 1, d) for i, d in enumerate(identity["deals"]))
        return (
            "Heads-up fixed-limit Texas hold'em (blinds 1/2, bets 2/4, stacks 200) against a fixed opponent. "
            "In each spot below it is your turn; choose fold, call (or check) or raise. After your choice you "
            "check/call to the end of the hand. Reward: chips won over the match.\n"
            f"{spots}\nThe hand_equity tool estimates your equity against a random hand. "
            "Finish with one line `Decisions: 1=raise, 2=call, ...` covering every spot."
        )

    def reference_completion(self, identity: Identity) -> str:
        best = [max(ACTIONS, key=lambda a: (c[a], -ACTIONS.index(a))) for c in identity["chips"]]
        return "Decisions: " + ", ".join(f"{i + 1}={a}" for i, a in enumerate(best))


@register_tool("hand_equity")
class HandEquity(Tool):
    """Monte Carlo equity vs a uniformly random opponent hand; never looks at the opponent's real cards."""

    description = "Estimate the win probability of two hole cards with a board against a random hand."
    parameters = {
        "type": "object",
        "properties": {
            "hole": {"type": "string", "description": "e.g. 'As Kd'"},
            "board": {"type": "string", "description": "e.g. 'Jc 3d 5c' or ''"},
        },
        "required": ["hole"],
    }
    blocking = True

    def execute_sync(self, state: Any, arguments: dict[str, Any]) -> ToolResult:
        from pokerkit import StandardHighHand

        hole = str(arguments.get("hole", "")).split()
        board = str(arguments.get("board", "")).split()
        known = hole + board
        if len(hole) != 2 or len(board) > 5 or len(set(known)) != len(known) or any(c not in DECK for c in known):
            return ToolResult(
                text="error: give two distinct hole cards like 'As Kd' and up to 5 board cards", error="bad_arguments"
            )
        rng = random.Random(" ".join(known))  # same question, same answer
        rest = [c for c in DECK if c not in known]
        wins = 0.0
        trials = int(self.params.get("trials", 300))
        for _ in range(trials):
            draw = rng.sample(rest, 2 + 5 - len(board))
            full = board + draw[2:]
            mine = StandardHighHand.from_game("".join(hole), "".join(full))
            theirs = StandardHighHand.from_game("".join(draw[:2]), "".join(full))
            wins += 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0
        return ToolResult(text=f"equity {wins / trials:.3f} over {trials} random opponent hands")


_DECISION = re.compile(r"(\d+)\s*[=:]\s*(fold|call|check|raise|bet)", re.I)


@register_reward("poker_chips")
class PokerChips(RewardCalculator):
    partial_credit = True  # chips won, scaled between the worst and best decisions

    def extract(self, text: str) -> str | None:
        lines = re.findall(r"(?im)^\s*decisions\s*:(.*)$", text or "")
        return lines[-1].strip() if lines else None

    def verify(self, extracted: str, identity: Identity) -> float:
        pairs = _DECISION.findall(extracted)
        if len({int(i) for i, _ in pairs}) < len(pairs):
            return 0.0  # a deal decided twice is a hedge ("1=fold, …, 1=raise"), not a decision
        choice = {int(i): {"check": "call", "bet": "raise"}.get(a.lower(), a.lower()) for i, a in pairs}
        won = best = worst = 0
        for i, deal in enumerate(identity["deals"]):
            action = choice.get(i + 1)
            chips = identity["chips"][i]
            best, worst = best + max(chips.values()), worst + min(chips.values())
            # replayed on the engine, not read from the stored table: the table only normalises
            won += play(deal, action) if action in ACTIONS else min(chips.values())
        return 1.0 if best == worst else max(0.0, min(1.0, (won - worst) / (best - worst)))
