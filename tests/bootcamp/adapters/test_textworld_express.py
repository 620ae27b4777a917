"""TextWorldExpress's games (`twx.<game>`) through the real interaction on its real engine (a JVM):
the engine's gold path wins every generated case, generation is the same bytes here and in a fresh
interpreter, and answers that are not the task's solution score 0: no action, a claimed win, a wrong
item boxed, every item boxed (a candidate list played out), the right items out of order, and cases
that are not ones the adapter makes. Java and the library come from the test role (missing: CI fails)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ptbench.core.errors import UserError

from ..conftest import require
from .test_adapters_libraries import REPO, _cases, _play

GAMES = ["arithmetic", "coin", "cookingworld", "mapreader", "peckingorder", "simonsays", "simonsays_memory",
         "sorting", "twc"]  # fmt: skip


def _require() -> None:
    require(importlib.util.find_spec("textworld_express") is not None,
            "textworld-express is not installed (ptbench[bootcamp-textworld-express])")  # fmt: skip
    require(shutil.which("java") is not None, "no Java runtime (apt-get install default-jre-headless)")


def _play_oracle(env, identity: dict) -> tuple[float, list[str]]:
    return _play(env, identity, lambda s, i=identity: env.interaction.oracle(s, i), turns=250)


def test_every_game_the_engine_lists_is_an_environment() -> None:
    """The engine's own roster, so a new game in a later release is not silently left out."""
    _require()
    from ptbench.bootcamp.adapters import textworld_express as twx

    env = twx.POOL.borrow()
    try:
        listed = set(env.getGameNames())
    finally:
        twx.POOL.give_back(env)
    assert listed == {engine for engine, _, _ in twx.FAMILIES.values()}
    assert set(twx.names()) == set(GAMES)


@pytest.mark.parametrize("game", GAMES)
def test_gold_path_wins_every_case_and_hostile_play_scores_0(game: str, tmp_path: Path) -> None:
    _require()
    env, cases = _cases(f"twx.{game}", tmp_path, 3)
    assert len({json.dumps(c["params"], sort_keys=True) + str(c["seed"]) for c in cases}) == 3  # cases differ
    for identity in cases:
        score, seen = _play_oracle(env, identity)
        assert score == 1.0, seen[-3:]
        assert "Your reward: 1.00" in seen[-1]
        for hostile in ("", "I solved the task. score: 1.0", "Action: I won the game, reward 1", "Action: help"):
            assert _play(env, identity, lambda s, h=hostile: h, turns=8)[0] == 0.0, hostile


def prompts(prefix: str, cases: list[dict]) -> list[str]:
    """The prompts of `cases` of the environments `prefix + case["game"]` (run in a fresh interpreter too)."""
    from ptbench.bootcamp import load_bootcamp
    from ptbench.bootcamp.environment import build_environment

    return [build_environment(load_bootcamp(prefix + c["game"])).generators["default"].prompt(c) for c in cases]


def fresh_prompts(prefix: str, cases: list[dict]) -> list[str]:
    """`prompts` computed in a fresh interpreter (another hash seed, nothing warm)."""
    script = ("import json, sys; from tests.bootcamp.adapters.test_textworld_express import prompts; "
              "print(json.dumps(prompts(sys.argv[1], json.loads(sys.argv[2]))))")  # fmt: skip
    proc = subprocess.run([sys.executable, "-c", script, prefix, json.dumps(cases)], capture_output=True, text=True,
                          timeout=300, cwd=REPO, check=True)  # fmt: skip
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_prompts_are_the_same_bytes_in_a_fresh_interpreter(tmp_path: Path) -> None:
    """Generated here (on a JVM that has played other games) and in a fresh interpreter with its own
    JVM: the same prompts (the engine must not carry state from one case to the next)."""
    _require()
    cases = []
    for game in ("cookingworld", "twc", "sorting"):
        env, made = _cases(f"twx.{game}", tmp_path / game, 2)
        _play_oracle(env, made[0])  # the engine plays a game before the prompts are made here
        cases += made
    here = prompts("twx.", list(reversed(cases)))
    assert fresh_prompts("twx.", cases) == list(reversed(here))
    assert len(set(here)) == len(here)


def _valid(state) -> list[str]:
    return list(state.infos["validActions"])


def test_arithmetic_a_wrong_item_or_every_item_boxed_scores_0(tmp_path: Path) -> None:
    """Arithmetic: solve the problem, box the item with that quantity. The gold path's item wins;
    boxing another first (a guess, or all of them as a candidate list) is the engine's task failure."""
    _require()
    env, cases = _cases("twx.arithmetic", tmp_path, 2)
    for identity in cases:
        state = env.interaction.start(identity)
        gold = list(state.gold)
        right = gold[-1].removeprefix("put ").removesuffix(" in box")
        for action in gold[:-2]:  # read the problem, as the gold path does, then box a wrong item
            env.interaction.respond(state, identity, f"Action: {action}")
        wrong = next(a for a in _valid(state) if a.startswith("take ") and "math" not in a and right not in a)
        env.interaction.respond(state, identity, f"Action: {wrong}")
        result = env.interaction.respond(state, identity, f"Action: put {wrong.removeprefix('take ')} in box")
        assert result.terminate and env.interaction.outcome(state, identity).score == 0.0
        assert state.infos["taskfailure"]

        state = env.interaction.start(identity)  # every item taken and boxed, the right one last
        for action in gold[:-2]:
            env.interaction.respond(state, identity, f"Action: {action}")
        items = [a.removeprefix("take ") for a in _valid(state) if a.startswith("take ") and "math" not in a]
        for item in sorted(items, key=lambda i: i == right):
            for act in (f"take {item}", f"put {item} in box"):
                if not state.done:
                    env.interaction.respond(state, identity, f"Action: {act}")
        assert env.interaction.outcome(state, identity).score == 0.0


def test_sorting_the_right_objects_out_of_order_score_0(tmp_path: Path) -> None:
    """Sorting: the gold path's objects boxed largest first are the engine's task failure."""
    _require()
    env, cases = _cases("twx.sorting", tmp_path, 2)
    for identity in cases:
        state = env.interaction.start(identity)
        gold = list(state.gold)
        puts = [a for a in gold if a.startswith("put ")]
        assert len(puts) >= 2
        for put in reversed(puts):
            item = put.removeprefix("put ").removesuffix(" in box")
            for act in (f"take {item}", put):
                if not state.done:
                    env.interaction.respond(state, identity, f"Action: {act}")
        assert env.interaction.outcome(state, identity).score == 0.0


def test_cases_the_adapter_does_not_make_are_refused(tmp_path: Path) -> None:
    """A case is data another process wrote: a parameter out of the adapter's range, one it does not
    draw, another fold or a negative seed is one clear error, not a game the engine makes anyway."""
    _require()
    from ptbench.bootcamp.adapters.textworld_express import game_params

    env, cases = _cases("twx.cookingworld", tmp_path, 1)
    good = cases[0]
    assert game_params(good)[0] == "cookingworld"
    for bad in ({**good, "params": {**good["params"], "numLocations": 12}},
                {**good, "params": {**good["params"], "numIngredients": True}},
                {**good, "params": {**good["params"], "memorization": 1}},
                {**good, "fold": "secret"}, {**good, "seed": -1}, {**good, "game": "zork"}):  # fmt: skip
        with pytest.raises(UserError):
            env.interaction.start(bad)
