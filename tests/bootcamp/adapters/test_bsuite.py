"""bsuite's environments (`bsuite.<name>`) through the real interaction on the library's own dm_env
environments: the state-reading oracle wins every generated case; an idle player, constant actions
and hostile answers lose (catch, memory_len and umbrella_length are choices among 2-3 moves: a
constant action wins only the cases where it happens to be right, never all of them); the prompt shows
the library's observation and nothing of the hidden state; a player that reads only the rendered text
wins the swing-up too; and the list matches the library, each left-out environment saying why."""

from __future__ import annotations

import importlib.util
import math
import re
from pathlib import Path

import pytest

from ..conftest import require
from .test_adapters_libraries import _cases, _play

GAMES = ["cartpole_swingup", "catch", "memory_len", "mountain_car", "umbrella_length"]
HOSTILE = ("", "I caught it. reward: 1.0", "Move: left or right", "Move: 0, 1", "Move: 0 1")


def _require() -> None:
    require(importlib.util.find_spec("bsuite") is not None, "bsuite is not installed (ptbench[bootcamp-bsuite])")


def _oracle(env, identity):
    return lambda s: env.interaction.oracle(s, identity)


@pytest.mark.parametrize("game", GAMES)
def test_oracle_wins_every_case_and_hostile_play_scores_0(game: str, tmp_path: Path) -> None:
    _require()
    env, cases = _cases(f"bsuite.{game}", tmp_path, 3)
    for identity in cases:
        score, seen = _play(env, identity, _oracle(env, identity), turns=1100)
        assert score == 1.0, seen[-2:]
        for hostile in HOSTILE:
            assert _play(env, identity, lambda s, h=hostile: h, turns=1100)[0] == 0.0, hostile


@pytest.mark.parametrize(("game", "moves"), [("mountain_car", ("left", "none", "right")),
                                             ("cartpole_swingup", ("left", "none", "right"))])  # fmt: skip
def test_idle_and_constant_players_lose_the_control_tasks(game: str, moves: tuple[str, ...], tmp_path: Path) -> None:
    _require()
    env, cases = _cases(f"bsuite.{game}", tmp_path, 2)
    for identity in cases:
        for move in moves:
            assert _play(env, identity, lambda s, m=move: f"Move: {m}", turns=1100)[0] == 0.0, move


def test_a_constant_answer_wins_only_where_it_happens_to_be_right() -> None:
    """The choice tasks: over 40 seeds each constant answer loses some cases (no constant player wins all),
    and flipping the oracle's deciding answer loses every case."""
    _require()
    from ptbench.bootcamp.adapters import bsuite as bs
    from ptbench.bootcamp.adapters.turns import oracle_wins

    def plays(game: str, seed: int, pick) -> bool:
        episode = bs.make({"game": game, "seed": seed})
        while not episode.over():
            episode.play(pick(episode))
            episode.moves_made += 1
        return episode.score() == 1.0

    for game, moves in (
        ("catch", ("left", "stay", "right")),
        ("memory_len", ("0", "1")),
        ("umbrella_length", ("0", "1")),
    ):
        for move in moves:
            wins = sum(plays(game, seed, lambda e, m=move: m) for seed in range(40))
            assert 0 < wins < 40, (game, move, wins)
        assert all(oracle_wins(bs.make, {"game": game, "seed": seed}) for seed in range(40))
    flip = {"0": "1", "1": "0"}
    for seed in range(20):  # the wrong bit (memory: at the end; umbrella: the first move) always loses
        assert not plays("memory_len", seed, lambda e: flip[e.oracle_move()])
        assert not plays("umbrella_length", seed, lambda e: flip[e.oracle_move()])


def test_the_prompt_shows_the_observation_only(tmp_path: Path) -> None:
    """No case's seed or hidden state in the prompt: memory's cue only at the start (then the history
    must hold it), catch's board, the swing-up's rounded numbers."""
    _require()
    env, cases = _cases("bsuite.memory_len", tmp_path / "m", 3)
    for identity in cases:
        state = env.interaction.start(identity)
        prompt = env.generators["default"].prompt(identity)
        assert str(identity["seed"]) not in prompt and re.search(r"cue [+-]1", prompt)
        env.interaction.respond(state, identity, "Move: 0")
        env.interaction.respond(state, identity, "Move: 0")
        if not state.over():  # from the third observation on, the cue is gone
            assert not re.search(r"cue [+-]1", state.view())
    env, cases = _cases("bsuite.cartpole_swingup", tmp_path / "c", 2)
    for identity in cases:
        prompt = env.generators["default"].prompt(identity)
        assert str(identity["seed"]) not in prompt and not re.search(r"\d\.\d{4}", prompt)


def test_a_text_player_swings_the_pole_up_from_the_rounded_numbers(tmp_path: Path) -> None:
    _require()
    from ptbench.bootcamp.adapters.bsuite import swingup_move

    number = re.compile(r"[+-]\d+\.\d+")

    def player(state) -> str:
        x, x_dot, sin, cos, theta_dot = (float(n) for n in number.findall(state.board().splitlines()[1])[:5])
        return "Move: " + swingup_move(3 * x, 3 * x_dot, math.atan2(sin, cos), theta_dot)

    env, cases = _cases("bsuite.cartpole_swingup", tmp_path, 2)
    for identity in cases:
        assert _play(env, identity, player, turns=1100)[0] == 1.0


def test_the_list_matches_the_library_and_each_left_out_one_says_why() -> None:
    _require()
    from ptbench.bootcamp.adapters import bsuite as bs

    assert bs.names() == GAMES and not set(GAMES) & set(bs.EXCLUDED)
    assert all(reason.strip() for reason in bs.EXCLUDED.values())
