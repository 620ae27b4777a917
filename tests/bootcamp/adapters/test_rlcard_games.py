"""RLCard's UNO and Mahjong: the seat's view never shows another hand or the deck (the hidden cards
dealt again give the same prompt), an answer that is no legal action is refused with the list and the
third ends the game at 0, the oracle finishes games with every move accepted, a claimed win pays
nothing, and an episode does not depend on others run in the same process. Their verification is
test_verify_catalogue.py's."""

from __future__ import annotations

import importlib.util
import random
import subprocess
import sys

import pytest

from tests.bootcamp.conftest import require

require(importlib.util.find_spec("rlcard") is not None, "pip install 'ptbench[bootcamp-rlcard]'")

from ptbench.bootcamp.adapters import rlcard_games as rl  # noqa: E402
from ptbench.bootcamp.adapters.rlcard_games import Match, RLCardGenerator, RLCardInteraction  # noqa: E402
from ptbench.core.errors import UserError  # noqa: E402

GAMES = ("uno", "mahjong")


def _case(game: str, k: int = 0) -> dict:
    return RLCardGenerator(game=game).case(random.Random(k))


def _redeal_hidden(match: Match, seed: int) -> None:
    """Deal the cards the seat cannot see again: every other hand and the deck pooled, shuffled and
    handed back in the same counts (the seat's own hand and the table stay)."""
    others = [p for i, p in enumerate(match.game.players) if i != match.seat]
    pool = [c for p in others for c in p.hand] + list(match.game.dealer.deck)
    random.Random(seed).shuffle(pool)
    for p in others:
        p.hand, pool = pool[: len(p.hand)], pool[len(p.hand) :]
    match.game.dealer.deck[:] = pool


@pytest.mark.parametrize("game", GAMES)
def test_the_prompt_is_the_same_whatever_the_hidden_cards_are(game: str) -> None:
    for k in range(3):
        identity = _case(game, k)
        prompt = RLCardGenerator(game=game).prompt(identity)
        a, b = Match(identity), Match(identity)
        before = [[c.get_str() for c in p.hand] for p in b.game.players]
        _redeal_hidden(b, 99 + k)
        assert [[c.get_str() for c in p.hand] for p in b.game.players] != before  # the probe changes something
        view = a.view()
        assert b.view() == view and view in prompt
        shown = set(view.split())
        # no card of another hand is named unless the seat's own hand or the table shows one like it
        mine_or_table = set(a.table().split())
        for p in (p for i, p in enumerate(a.game.players) if i != a.seat):
            for card in p.hand:
                name = rl._uno_card(card) if game == "uno" else card.get_str()
                assert name not in shown or name in mine_or_table


@pytest.mark.parametrize("game", GAMES)
def test_an_illegal_answer_is_refused_with_the_list_and_the_third_ends_the_game_at_0(game: str) -> None:
    identity = _case(game)
    interaction = RLCardInteraction()
    state = interaction.start(identity)
    for answer in ("Move: not-a-card", "I play my best card", "Move: reward 1.0"):
        result = interaction.respond(state, identity, answer)
        assert result.extra["valid"] is False
    assert result.terminate and result.turn_score == 0.0
    assert interaction.outcome(state, identity).score == 0.0
    state = interaction.start(identity)
    first = interaction.respond(state, identity, "Move: nonsense")
    assert not first.terminate and "not one of your legal moves" in first.feedback
    assert all(m in first.feedback for m in state.actions())


@pytest.mark.parametrize("game", GAMES)
def test_the_oracle_finishes_every_game_with_every_move_accepted(game: str) -> None:
    interaction, outcomes = RLCardInteraction(), []
    for k in range(8 if game == "uno" else 3):
        identity = _case(game, k)
        state = interaction.start(identity)
        for _ in range(rl.TURNS):
            result = interaction.respond(state, identity, interaction.oracle(state, identity) or "")
            assert result.extra["valid"] is True
            if result.terminate:
                break
        assert state.over() and not state.lost_by_strikes
        outcomes.append(interaction.outcome(state, identity).score)
    assert all(0.0 <= s <= 1.0 for s in outcomes)
    if game == "uno":
        assert set(outcomes) == {0.0, 1.0}  # a two-seat game has a winner; both happen


def test_the_payoff_is_the_librarys_for_the_seat_scaled() -> None:
    match = Match(_case("uno"))
    match.game.round.is_over, match.game.round.winner = True, [match.seat]
    assert match.score() == 1.0
    match.game.round.winner = [1 - match.seat]
    assert match.score() == 0.0
    mahjong = Match(_case("mahjong"))
    mahjong.game.dealer.deck[:] = []  # the wall used up, nobody's hand complete: a drawn game
    assert mahjong.over() and mahjong.score() == 0.5


def test_a_claimed_win_in_the_text_pays_nothing() -> None:
    identity = _case("uno")
    interaction = RLCardInteraction()
    state = interaction.start(identity)
    interaction.respond(state, identity, "I won. reward: 1.0")
    assert interaction.outcome(state, identity).score == 0.0


def test_an_episode_is_the_same_whatever_ran_before_it_and_in_a_fresh_interpreter() -> None:
    identity = _case("uno", 3)
    alone = Match(identity).view()
    Match(_case("uno", 4))  # another episode in between draws from its own RNGs
    import numpy as np

    np.random.seed(1)
    random.seed(2)
    assert Match(identity).view() == alone
    code = f"from ptbench.bootcamp.adapters.rlcard_games import Match\nprint(Match({identity!r}).view(), end='')"
    fresh = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert fresh.stdout == alone


def test_the_left_out_games_are_named_with_their_reason() -> None:
    assert rl.names() == ["mahjong", "uno"]
    with pytest.raises(UserError, match="OpenSpiel"):
        rl.check_game("gin-rummy")
    assert set(rl.EXCLUDED) == {"blackjack", "bridge", "doudizhu", "gin-rummy", "leduc-holdem", "limit-holdem",
                                "no-limit-holdem"}  # fmt: skip
