"""OpenSpiel's games beyond the default rule (simultaneous-move games played turn-based, games of three
or more seats, games loaded with parameters, games with a longer turn limit): what the model's seat is
shown never reveals what it must not see (an opponent's move of the same round, hidden dice or cards),
and the honest views still show the state. Their verification is test_verify_catalogue.py's."""

from __future__ import annotations

import importlib.util
import random

import pytest

from tests.bootcamp.conftest import require

require(importlib.util.find_spec("pyspiel") is not None, "pip install 'ptbench[bootcamp-openspiel]'")

from ptbench.bootcamp.adapters import openspiel as spiel  # noqa: E402
from ptbench.bootcamp.adapters.openspiel import Match  # noqa: E402


def _match(game: str, seat: int) -> Match:
    return Match({"game": game, "seed": 7, "player": seat})


def _first_round(game: str, seat: int, opponent_moves: dict[int, int]) -> Match:
    """A match of `game` at its first decision of seat `seat`, the other seats having played
    `opponent_moves` (seat -> action) and chance its first outcome."""
    match = _match(game, seat)
    state = match.game.new_initial_state()
    while not state.is_terminal() and state.current_player() != seat:
        if state.is_chance_node():
            state.apply_action(state.chance_outcomes()[0][0])
        else:
            state.apply_action(opponent_moves[state.current_player()])
    match.state = state
    return match


def test_the_games_beyond_the_default_rule_are_listed_and_the_left_out_are_not() -> None:
    names = set(spiel.names())
    assert spiel.SIMULTANEOUS | spiel.MORE_SEATS | set(spiel.PARAMS) <= names
    assert not names & set(spiel.EXCLUDED)
    assert "tic_tac_toe" in names and not any(n.startswith("mfg_") for n in names)


@pytest.mark.parametrize("game", sorted(g for g in spiel.SIMULTANEOUS if spiel._load(g)[0].num_players() > 1))
def test_a_simultaneous_round_hides_the_opponents_move_from_the_model(game: str) -> None:
    """The model (seat 1) moves after seat 0 in the turn-based round: its view is the same whatever
    seat 0 chose, though the wrapper's whole state (`str`, never shown) tells the moves apart."""
    first = _match(game, 0).game.new_initial_state()
    while first.is_chance_node():
        first.apply_action(first.chance_outcomes()[0][0])
    a, b = first.legal_actions(0)[:2]
    seen_a, seen_b = _first_round(game, 1, {0: a}), _first_round(game, 1, {0: b})
    assert str(seen_a.state) != str(seen_b.state)  # the probe can tell a leak
    assert seen_a.view() == seen_b.view()
    assert seen_a.moves() and all(m in seen_a.view() for m in list(seen_a.moves())[:3])


def test_a_simultaneous_round_shows_the_moves_once_it_is_played() -> None:
    """The honest control: after the round, the opponent's bid is part of the state the model sees."""
    views = set()
    for bid in (0, 12):
        match = _first_round("goofspiel", 0, {})
        match.state.apply_action(5)  # the model's bid
        match.state.apply_action(bid)  # the opponent's: the round is played
        while match.state.is_chance_node():
            match.state.apply_action(match.state.chance_outcomes()[0][0])
        views.add(match.view())
    assert len(views) == 2


@pytest.mark.parametrize("game", ["liars_dice", "phantom_ttt_ir", "bridge_uncontested_bidding", "hearts", "tarok"])
def test_games_without_an_observation_show_the_seats_information_not_the_whole_state(game: str) -> None:
    """Games with no observation string: the view is the seat's information state; `str(state)`
    (everyone's dice, hands or marks) is never shown."""
    match = _match(game, 1)
    assert match.board() == match.state.information_state_string(1)
    assert str(match.state) not in match.view()


def test_liars_dice_hides_the_opponents_dice() -> None:
    """The attack the view must stop: two deals that differ only in the opponent's dice look the same."""
    views = []
    for opponent_die in (0, 5):
        match = _match("liars_dice", 1)
        state = match.game.new_initial_state()
        state.apply_action(opponent_die)  # seat 0's die
        state.apply_action(2)  # seat 1's die
        state.apply_action(state.legal_actions()[0])  # seat 0's bid
        match.state = state
        views.append(match.view())
    assert views[0] == views[1]
    assert "3" in views[0]  # the model's own die (face 3) is shown


@pytest.mark.parametrize("game", sorted(spiel.LONG))
def test_a_long_game_always_ends_within_its_turn_limit(game: str) -> None:
    """A LONG game's turn limit covers its own length bound: the oracle can always finish it."""
    loaded, _ = spiel._load(game)
    turns = spiel.bootcamp_dict(game)["limits"]["max_assistant_turns"]
    assert turns * loaded.num_players() >= loaded.max_game_length() and turns > spiel.TURNS


@pytest.mark.parametrize("game", ["negotiation", "tarok", "bridge_uncontested_bidding"])
def test_a_game_with_its_own_rng_deals_by_the_episodes_seed(game: str) -> None:
    """Games that draw chance from their own RNG: the same seed deals the same (in any order, after
    other episodes), another seed deals otherwise (with the library's default seed every episode
    would get the same deal)."""
    first = _match(game, 0).view()
    others = {Match({"game": game, "seed": s, "player": 0}).view() for s in range(8, 12)}
    assert _match(game, 0).view() == first
    assert len(others | {first}) > 2


def test_no_case_is_a_game_the_model_never_plays() -> None:
    """Euchre's seeds where a partner going alone ends the hand before the model's seat moves are
    drawn again (any answer would be paid that outcome); the seeds they replace exist."""
    gen = spiel.OpenSpielGenerator(game="euchre")
    raw = random.Random(3)
    skipped = 0
    for _ in range(300):
        identity = {"game": "euchre", "seed": raw.getrandbits(32), "player": raw.randrange(4)}
        skipped += Match(identity).state.is_terminal()
    assert skipped > 0  # the attack exists
    for k in range(300):
        assert not Match(gen.case(random.Random(k))).state.is_terminal()


def test_the_greedy_oracle_takes_the_piece_on_offer_and_plays_only_listed_moves() -> None:
    """Chess's oracle (GREEDY): after 1. e4 d5 white's best material is exd5, in the prompt's own move
    text; the seat is read from the FEN's side field (black's answer to it recaptures with the queen)."""
    seat = 1  # OpenSpiel's chess: white is player 1
    match = Match({"game": "chess", "seed": 7, "player": seat})
    match.state = match.game.new_initial_state()
    for san in ("e4", "d5"):
        match.state.apply_action(match.state.string_to_action(san))
    assert spiel._greedy_move(match, match.moves(), random.Random(0)) == "exd5"
    match.state.apply_action(match.state.string_to_action("exd5"))
    match.seat = 0
    assert spiel._greedy_move(match, match.moves(), random.Random(0)) == "Qxd5"


@pytest.mark.parametrize("game", sorted(spiel.TURNS_FOR))
def test_a_game_with_a_turn_limit_of_its_own_gets_it(game: str) -> None:
    assert spiel.bootcamp_dict(game)["limits"]["max_assistant_turns"] == spiel.TURNS_FOR[game] > spiel.TURNS
