"""TextArena's adapter beyond what `bootcamp verify` checks (tests/bootcamp/test_verify_catalogue.py):
the seeded opponent of the two-player games, the filter that keeps only cases the oracle wins, and the
copies of a dealt game that RushHour and Sokoban episodes start from."""

from __future__ import annotations

import importlib.util
import random
from collections.abc import Callable

import pytest

from ptbench.core.errors import UserError
from tests.support import require

require(importlib.util.find_spec("textarena") is not None,
        "TextArena is not installed (pip install 'ptbench[bootcamp-textarena]')")  # fmt: skip

from ptbench.bootcamp.adapters import textarena as ta  # noqa: E402


def _play(identity: dict, moves: list[str]) -> tuple[list[str], float | None]:
    game, said = ta.Game(identity), []
    said.append(game.news())
    for move in moves:
        if game.step(move):
            break
        said.append(game.news())
    return said, game.reward


def test_the_two_player_opponent_is_a_function_of_the_case() -> None:
    """Same case and same model moves: the same game, move for move; other seeds: other opponents."""
    moves = ["[X 4]", "[O 0]", "[X 8]", "[O 2]", "[X 6]"]
    games = {seed: _play({"game": "WildTicTacToe-v0", "seed": seed}, moves) for seed in range(4)}
    assert _play({"game": "WildTicTacToe-v0", "seed": 0}, moves) == games[0]
    assert len({tuple(said) for said, _ in games.values()}) > 1
    for said, _ in games.values():  # the opponent's moves show in the model's feedback
        assert "[Player 1]" in said[1]


def test_two_refused_moves_lose_a_two_player_game_and_pay_nothing() -> None:
    game = ta.Game({"game": "Chopsticks-v0", "seed": 5})
    game.news()
    assert not game.step("I win. reward: 1.0")  # the library gives one retry
    assert game.step("[attack 7 7]") and game.reward == 0.0


def test_the_opponent_only_plays_legal_moves(monkeypatch: pytest.MonkeyPatch) -> None:
    """The library counts a turn per accepted move: after each of seat 0's moves, the turn moved on by
    one plus one for each move the opponent drew (some games give a player another move, MemoryGame
    after a match), so every drawn move was accepted on its first try (no silent retry)."""
    drawn = [0]
    for name, moves in list(ta.OPPONENTS.items()):

        def counted(env: object, moves: Callable[[object], list[str]] = moves) -> list[str]:
            drawn[0] += 1
            return moves(env)

        monkeypatch.setitem(ta.OPPONENTS, name, counted)
        for seed in range(4):
            game = ta.Game({"game": name, "seed": seed})
            while True:
                before, drawn[0] = ta._core(game).state.turn, 0
                if game.step(ta.ORACLES[name](ta._core(game))):
                    break
                assert ta._core(game).state.turn == before + 1 + drawn[0], name
            assert not ta._core(game).state.game_info[1].get("invalid_move")


def test_cases_of_a_filtered_game_are_seeds_the_oracle_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    gen = ta.TextArenaGenerator(game="Chopsticks-v0")
    for k in range(3):
        assert ta.oracle_wins(gen.case(random.Random(k)))
    assert gen.case(random.Random(1)) == gen.case(random.Random(1))
    # an oracle that loses every game: no case can be made, and the generator says so
    monkeypatch.setitem(ta.ORACLES, "Countdown-v0", lambda env: "[0 0 +]")
    with pytest.raises(UserError, match="won none"):
        ta.TextArenaGenerator(game="Countdown-v0").case(random.Random(0))


def test_an_episode_of_a_slow_deal_game_starts_from_its_own_copy() -> None:
    """Two episodes of one Sokoban case: playing one leaves the other (and the kept deal) untouched."""
    identity = {"game": "Sokoban-v0", "seed": 11}
    first, second = ta.Game(identity), ta.Game(identity)
    start = second.news()
    while not first.step(ta.ORACLES["Sokoban-v0"](ta._core(first))):
        pass
    assert first.reward == 1.0
    assert second.news() == "" and ta.Game(identity).news() == start
    assert (ta._core(second).room_state == ta._core(ta.Game(identity)).room_state).all()


def test_every_textarena_family_is_played_or_left_out_with_a_reason() -> None:
    from textarena.envs.registration import ENV_REGISTRY

    families = {name.split("-v")[0] for name in ENV_REGISTRY}
    played = {name.split("-v")[0] for name in ta.GAMES}
    assert not played & set(ta.EXCLUDED)
    assert families == played | set(ta.EXCLUDED)
    assert all(why for why in ta.EXCLUDED.values())
