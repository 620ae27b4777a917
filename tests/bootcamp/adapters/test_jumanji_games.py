"""Jumanji's puzzles (`jumanji.<Env>`) through the real interaction on the library's own (jitted)
environments: the oracle (the generator's own solution) wins every generated case, hostile play scores
0 (no action, claimed wins, idle wires, hedged or listed actions, a piece placed again and again), the
prompts show nothing of the solution (FlatPack's piece numbers) and are the same bytes in a fresh
interpreter. The tests that play (each process compiles the library's step: ~20 s) are `slow`."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import pytest

from ..conftest import require
from .test_adapters_libraries import _cases, _play
from .test_textworld_express import prompts

GAMES = ["BinPack", "Cleaner", "Connector", "FlatPack"]
# per game a player that does nothing useful: wires that stay, a piece placed again and again, robots into the wall
IDLE = {
    "BinPack": "Action: 0 0",
    "Cleaner": "Action: up up up",
    "Connector": "Action: A stay",
    "FlatPack": "Action: A 0 0 0",
}
HOSTILE = ["", "I won. reward: 1.0", "Action: done", "Action: A up or down", "Action: A 0 0 0 or B 1 2 3"]


def _require() -> None:
    require(importlib.util.find_spec("jumanji") is not None, "jumanji is not installed (ptbench[bootcamp-jumanji])")


def test_rotation_is_the_librarys() -> None:
    _require()
    import jax.numpy as jnp
    import numpy as np
    from jumanji.environments.packing.flat_pack.utils import rotate_block

    from ptbench.bootcamp.adapters._jumanji_packing import rotate

    block = np.array([[1, 1, 0], [0, 1, 0], [0, 1, 1]]) * np.arange(1, 10).reshape(3, 3)
    for r in range(4):
        assert (rotate(np, block, r) == np.asarray(rotate_block(jnp.asarray(block), r))).all()


def test_the_flatpack_generator_steps_it_replays_are_the_librarys() -> None:
    """The private steps of FlatPack's generator `_jumanji_packing` calls (tests/test_private_api.py)."""
    _require()
    from jumanji.environments.packing.flat_pack.generator import RandomFlatPackGenerator

    from ...test_private_api import JUMANJI_FLATPACK

    assert all(callable(getattr(RandomFlatPackGenerator, n, None)) for n in JUMANJI_FLATPACK)


def test_actions_parse_strictly() -> None:
    _require()
    import numpy as np

    from ptbench.bootcamp.adapters import jumanji_games as jg

    wires = object.__new__(jg.Connector)
    wires.num = 10
    assert wires.parse("A up, c LEFT; J stay") == [1, 0, 4] + [0] * 6 + [0]
    for bad in ("", "A", "A up down", "K up", "AB up", "A north", "A up or B down"):
        assert wires.parse(bad) is None, bad
    pack = object.__new__(jg.FlatPack)
    pack.np, pack.blocks = np, np.zeros((25, 3, 3))
    pack.state = type("S", (), {"grid": np.zeros((11, 11))})()
    assert pack.parse("c 1 0 8") == [2, 1, 0, 8]
    for bad in ("C 1 0 9", "C 4 0 0", "Z 0 0 0", "C 1 0", "C -1 0 0", "C 1 0 0 0", "CC 1 0 0"):
        assert pack.parse(bad) is None, bad
    box = object.__new__(jg.BinPack)
    box.np, box.env = np, type("E", (), {"obs_num_ems": 40})()
    box.state = type("S", (), {"items_mask": np.ones(20, bool)})()
    assert box.parse("39 19") == [39, 19]
    for bad in ("40 0", "0 20", "0", "0 1 2", "-1 0", "a 1", "0 1 or 2 3"):
        assert box.parse(bad) is None, bad
    robots = object.__new__(jg.Cleaner)
    robots.num = 3
    assert robots.parse("UP, right Down") == [0, 1, 2]
    for bad in ("up right", "up right down left", "up right stay", "up or right down"):
        assert robots.parse(bad) is None, bad


def test_the_list_and_each_left_out_family_says_why() -> None:
    _require()
    from ptbench.bootcamp.adapters import jumanji_games as jg

    assert jg.names() == GAMES
    assert all(hasattr(jg.library().environments, g) for g in GAMES)
    assert all(reason.strip() for reason in jg.EXCLUDED.values())


@pytest.mark.slow
@pytest.mark.parametrize("game", GAMES)
def test_oracle_wins_every_case_and_hostile_play_scores_0(game: str, tmp_path: Path) -> None:
    _require()
    env, cases = _cases(f"jumanji.{game}", tmp_path, 2)
    for identity in cases:
        score, seen = _play(env, identity, lambda s, i=identity: env.interaction.oracle(s, i))
        assert score == 1.0, seen[-2:]
        assert "Your reward: 1.00" in seen[-1]
        for hostile in [*HOSTILE, IDLE[game]]:
            assert _play(env, identity, lambda s, h=hostile: h)[0] == 0.0, hostile


@pytest.mark.slow
def test_a_random_legal_player_loses_and_no_case_starts_won() -> None:
    """Connector's wires are never connected at the start (a single idle turn would win), and a player
    moving each wire at random among its legal moves does not connect them all (the control)."""
    _require()
    from ptbench.bootcamp.adapters import jumanji_games as jg

    for seed in range(30):
        assert not jg.make({"game": "Connector", "seed": seed}).won()
    rng = random.Random(0)
    game = jg.make({"game": "Connector", "seed": 1})
    while not game.done:
        mask = game.np.asarray(game.state.action_mask)
        moves = [f"{jg.LETTERS[i]} {rng.choice([d for d, a in jg.DIRECTIONS.items() if mask[i][a]])}"
                 for i in range(game.num)]  # fmt: skip
        game.step(", ".join(moves))
    assert not game.won()


@pytest.mark.slow
def test_prompts_hide_the_solution(tmp_path: Path) -> None:
    """(The same bytes in a fresh interpreter: `bootcamp verify`'s determinism check, which the catalogue
    test runs on every environment; a second fresh interpreter here cost ~40 s of JAX compiling.)"""
    _require()
    cases = []
    for game in GAMES:
        cases += _cases(f"jumanji.{game}", tmp_path / game, 1)[1]
    here = prompts("jumanji.", cases)
    for case, prompt in zip(cases, here, strict=True):
        if case["game"] == "FlatPack":  # the pieces as # and . only: their numbers name where they were cut
            pieces = prompt.split("Pieces left")[1].splitlines()[1:-1]
            assert len(pieces) == 25 and all(set(p[3:]) <= set("#./ ") for p in pieces)
        elif case["game"] == "BinPack":  # the generator's packing is not shown (nothing packed yet)
            assert "Packed: none" in prompt and prompt.count(" to (") == 1
        elif case["game"] == "Connector":
            assert "~" not in prompt.split("Rows go down")[1]  # no wire laid: the generator's walk is not shown
