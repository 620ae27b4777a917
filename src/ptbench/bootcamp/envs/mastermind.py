"""Mastermind: the model guesses a hidden code; an interaction scores each guess over several turns."""

from __future__ import annotations

import itertools
import random
import re
from typing import Any

from ptbench.bootcamp.api import (
    Generator,
    Identity,
    Interaction,
    InteractionResult,
    RewardCalculator,
    register_generator,
    register_interaction,
    register_reward,
)

_ORACLE_CODES = 100_000  # the oracle enumerates codes; beyond this many it has none
_GUESS = re.compile(r"(?i)guess\s*:\s*([0-9][0-9 ,]*)")


def parse_guess(text: str, length: int) -> list[int] | None:
    found = _GUESS.findall(text or "")
    if not found:
        return None
    digits = [int(d) for d in re.findall(r"\d", found[-1])]
    return digits if len(digits) == length else None


def score_guess(code: list[int], guess: list[int]) -> tuple[int, int]:
    """(exact matches, right colour in the wrong place)."""
    exact = sum(c == g for c, g in zip(code, guess, strict=True))
    common = sum(min(code.count(v), guess.count(v)) for v in set(guess))
    return exact, common - exact


@register_generator("mastermind")
class MastermindGenerator(Generator):
    """Params: length (4), colors (6, digits 1..colors), max_guesses (10)."""

    def case(self, rng: random.Random) -> Identity:
        length = int(self.params.get("length", 4))
        colors = int(self.params.get("colors", 6))
        if not 1 <= colors <= 9:
            raise ValueError("mastermind: colors must be 1..9")
        code = [rng.randint(1, colors) for _ in range(length)]
        return {
            "code": code,
            "length": length,
            "colors": colors,
            "max_guesses": int(self.params.get("max_guesses", 10)),
        }

    def prompt(self, identity: Identity) -> str:
        n, c = identity["length"], identity["colors"]
        return (
            f"Let's play Mastermind. I have a hidden code of {n} digits, each from 1 to {c} (repeats allowed). "
            f"You have {identity['max_guesses']} guesses. Reply with exactly one line `Guess: d1 d2 ... d{n}`. "
            "After each guess I tell you how many digits are right and in the right place (exact) and how many "
            "are right but in the wrong place (partial)."
        )

    def dedup_key(self, identity: Identity) -> str:
        return f"{identity['code']}/{identity['colors']}/{identity['max_guesses']}"

    def reference_completion(self, identity: Identity) -> str:
        return "Guess: " + " ".join(str(d) for d in identity["code"])


@register_interaction("mastermind")
class MastermindInteraction(Interaction):
    """Feedback per guess; ends on a solved code or when guesses run out. Turn score is
    (exact + partial/2) / length, kept in the trace."""

    def start(self, identity: Identity) -> dict[str, Any]:
        return {"guesses": 0, "history": []}

    def oracle(self, state: dict[str, Any], identity: Identity) -> str | None:
        """A player who never reads the code: the first code (in order) consistent with every feedback
        so far (at most 9 guesses on 4 digits of 6 colours, 7 of 4 colours)."""
        n, colors = identity["length"], identity["colors"]
        if colors**n > _ORACLE_CODES:
            return None
        seen = [(list(g), tuple(fb)) for g, fb in state.get("history", [])]
        for code in itertools.product(range(1, colors + 1), repeat=n):
            if all(score_guess(list(code), g) == fb for g, fb in seen):
                return "Guess: " + " ".join(map(str, code))
        return None

    def respond(self, state: dict[str, Any], identity: Identity, assistant_text: str) -> InteractionResult:
        state["guesses"] += 1
        left = identity["max_guesses"] - state["guesses"]
        guess = parse_guess(assistant_text, identity["length"])
        if guess is None:
            return InteractionResult(
                terminate=left <= 0,
                feedback=(
                    f"I could not read a guess. Reply with `Guess: ` and {identity['length']} digits. "
                    f"Guesses left: {left}."
                ),
                turn_score=0.0,
                extra={"valid": False},
            )
        exact, partial = score_guess(identity["code"], guess)
        state.setdefault("history", []).append((guess, (exact, partial)))
        solved = exact == identity["length"]
        return InteractionResult(
            terminate=solved or left <= 0,
            feedback="Solved!" if solved else f"exact: {exact}, partial: {partial}. Guesses left: {left}.",
            turn_score=(exact + partial / 2) / identity["length"],
            extra={"valid": True, "exact": exact, "partial": partial},
        )


@register_reward("mastermind")
class MastermindReward(RewardCalculator):
    def extract(self, text: str) -> str | None:
        found = _GUESS.findall(text or "")
        return found[-1].strip() if found else None

    def verify(self, extracted: str, identity: Identity) -> float:
        return 1.0 if [int(d) for d in re.findall(r"\d", extracted)] == identity["code"] else 0.0
