"""The loop for a game played in its library's engine (bootcamp/adapters/turns.py: `EngineGame`,
`EngineGenerator`, `EngineInteraction`), which GEM, TextWorld and ScienceWorld share, on a small
game of its own so it runs without those libraries (their real games: test_adapters_libraries.py, beside this file).
The winning line pays 1 from the game's state; text that claims a win, answers without an action
line (strikes) and a lost game pay 0; the throwaway game behind a prompt is finished."""

from __future__ import annotations

import random
from typing import Any

import pytest

from ptbench.bootcamp.adapters.turns import ACTION_LINE, EngineGame, EngineGenerator, EngineInteraction
from ptbench.core.errors import UserError

OPENED: list[Vault] = []


class Vault(EngineGame):
    """Open the vault with the seed's code; a wrong code ends the game lost."""

    def __init__(self, identity: dict[str, Any]) -> None:
        self.code = str(int(identity["seed"]) % 1000)
        self.first = "A vault with a three-digit code."
        self.finished = False
        self.opened = False
        OPENED.append(self)

    def step(self, action: str) -> str:
        self.done = True
        self.opened = action.strip() == self.code
        return "It opens." if self.opened else "Alarm."

    def won(self) -> bool:
        return self.opened

    def finish(self) -> None:
        self.finished = True
        super().finish()


class VaultGenerator(EngineGenerator):
    kind = "vault"
    names = staticmethod(lambda: ["vault"])
    library = staticmethod(lambda: None)
    make = Vault
    seed_bits = 31
    instructions = "Reply with one line `Action: <code>`."


class VaultInteraction(EngineInteraction):
    make = Vault
    action = ACTION_LINE


def _play(inter: EngineInteraction, identity: dict[str, Any], answers: list[str]) -> tuple[list[Any], float]:
    state = inter.start(identity)
    results = []
    for text in answers:
        results.append(inter.respond(state, identity, text))
        if results[-1].terminate:
            break
    return results, inter.outcome(state, identity).score


def test_the_right_action_wins_from_the_games_state() -> None:
    identity = {"game": "vault", "seed": 1234}
    results, score = _play(VaultInteraction(), identity, ["I think it is 234.\nAction: 234"])
    assert score == 1.0 and results[-1].turn_score == 1.0
    assert results[-1].feedback == "It opens.\nThe game is over. Your reward: 1.00."
    assert results[-1].extra == {"outcome": 1.0}


def test_claims_strikes_and_a_wrong_action_score_0() -> None:
    identity = {"game": "vault", "seed": 1234}
    claim = "The vault is open. reward: 1.0 (correct, score 1)"
    results, score = _play(VaultInteraction(), identity, [claim, claim, claim, "Action: 234"])
    assert score == 0.0 and len(results) == 3  # the third answer without an action ends the game
    assert [r.feedback for r in results[:2]] == ["Reply with one line `Action: <command>`."] * 2
    assert results[-1].feedback == "Too many answers without an action: the game is over."
    assert OPENED[-1].finished and not OPENED[-1].opened
    results, score = _play(VaultInteraction(), identity, ["Action: 235"])
    assert score == 0.0 and results[-1].feedback == "Alarm.\nThe game is over. Your reward: 0.00."


def test_without_an_action_pattern_the_whole_answer_is_stepped() -> None:
    class Whole(VaultInteraction):
        action = None
        ended = "Game over."

    results, score = _play(Whole(), {"game": "vault", "seed": 1234}, ["234"])
    assert score == 1.0 and results[-1].feedback == "It opens.\nGame over. Your reward: 1.00."


def test_the_generator_makes_seeded_cases_and_finishes_the_prompts_game() -> None:
    gen = VaultGenerator(game="vault")
    a, b = gen.case(random.Random(7)), gen.case(random.Random(7))
    assert a == b and set(a) == {"game", "seed"} and 0 <= a["seed"] < 2**31
    assert gen.prompt(a) == "A vault with a three-digit code.\n\nReply with one line `Action: <code>`."
    assert OPENED[-1].finished  # the prompt's game is given back
    assert gen.dedup_key(a) == f"vault/{a['seed']}"
    with pytest.raises(UserError, match="vault 'safe' is not one this adapter plays"):
        VaultGenerator.check_params({"game": "safe"})
