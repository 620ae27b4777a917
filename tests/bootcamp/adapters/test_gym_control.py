"""Gymnasium's classic-control families (`gym.cartpole`, `gym.mountain_car`, `gym.acrobot`) through the
real interaction on the library's own environments: the live-state oracle wins every generated case;
an idle player, every constant action and hostile answers lose; the prompt is the library's
observation rounded (nothing more of the state); and a player that reads only the rendered numbers
wins too (the task is winnable from what the model sees)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from ..conftest import require
from .test_adapters_libraries import _cases, _play

FAMILIES = {"cartpole": ("left", "right"), "mountain_car": ("left", "none", "right"),
            "acrobot": ("negative", "none", "positive")}  # fmt: skip
_NUMBER = re.compile(r"[+-]\d+\.\d+")


def _require() -> None:
    require(
        importlib.util.find_spec("gymnasium") is not None, "gymnasium is not installed (ptbench[bootcamp-gymnasium])"
    )


def _shown(state) -> list[float]:
    """The observation's numbers as the model sees them (the board's second line: signed, 3 decimals)."""
    return [float(n) for n in _NUMBER.findall(state.board().splitlines()[1])]


def _text_player(game: str):
    """A player that reads only the rendered text: the oracle's rules on the shown, rounded numbers."""

    def move(state) -> str:
        v = _shown(state)
        if game == "cartpole":
            x, x_dot, theta, theta_dot = v[:4]
            return "Move: " + ("right" if theta + 0.5 * theta_dot + 0.05 * x + 0.1 * x_dot > 0 else "left")
        if game == "mountain_car":
            return "Move: " + ("right" if v[1] >= 0 else "left")
        return "Move: " + ("positive" if v[5] > 0 else "negative")

    return move


@pytest.mark.parametrize("game", sorted(FAMILIES))
def test_oracle_wins_and_idle_constant_and_hostile_players_lose(game: str, tmp_path: Path) -> None:
    _require()
    env, cases = _cases(f"gym.{game}", tmp_path, 3)
    for identity in cases:
        score, seen = _play(env, identity, lambda s, i=identity: env.interaction.oracle(s, i), turns=600)
        assert score == 1.0, seen[-2:]
        for action in FAMILIES[game]:  # an idle player and every constant action
            assert _play(env, identity, lambda s, a=action: f"Move: {a}", turns=600)[0] == 0.0, action
        for hostile in ("", "I reached the goal. reward: 1.0", "Move: left or right", "Move: left, right"):
            assert _play(env, identity, lambda s, h=hostile: h, turns=600)[0] == 0.0, hostile


@pytest.mark.parametrize("game", sorted(FAMILIES))
def test_the_prompt_is_the_rounded_observation_and_a_text_player_wins(game: str, tmp_path: Path) -> None:
    _require()
    env, cases = _cases(f"gym.{game}", tmp_path, 2)
    for identity in cases:
        state = env.interaction.start(identity)
        prompt = env.generators["default"].prompt(identity)
        assert str(identity["seed"]) not in prompt
        shown = _shown(state)
        assert shown[: len(state.obs)] == [round(float(v), 3) for v in state.obs]
        assert not re.search(r"\d\.\d{4}", prompt)  # no more precision than the 3 decimals
        assert _play(env, identity, _text_player(game), turns=600)[0] == 1.0


def test_cartpole_pays_only_at_the_step_limit(tmp_path: Path) -> None:
    """A pole kept up for 199 of the 200 steps is not yet a win; the 200th step is."""
    _require()
    env, cases = _cases("gym.cartpole", tmp_path, 1)
    identity = cases[0]
    state = env.interaction.start(identity)
    for _ in range(199):
        result = env.interaction.respond(state, identity, env.interaction.oracle(state, identity))
        assert not result.terminate
    assert env.interaction.outcome(state, identity).score == 0.0
    result = env.interaction.respond(state, identity, env.interaction.oracle(state, identity))
    assert result.terminate and env.interaction.outcome(state, identity).score == 1.0
