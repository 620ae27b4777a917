"""TextWorld's procedurally generated text games as multi-turn ptbench environments
(`pip install 'ptbench[bootcamp-textworld]'`).

Each game family is one environment `tw.<family>`: its four challenges (`simple`, `coin_collector`,
`treasure_hunter`, `cooking`) at one difficulty each, and `custom` (TextWorld's own random world and
quest maker, `tw-make custom`). A case is (family, seed): TextWorld generates the game from the seed
and compiles it with its bundled Inform 7 into a cache (`PTBENCH_TEXTWORLD_CACHE`, default
`~/.cache/ptbench/textworld`; a game is written once, atomically, and is a pure function of its case).
The game is played through TextWorld's own engine: the objective and first room are the user turn,
each later observation the feedback; the model answers one line `Action: <command>`. An answer with
no such line is refused, the third refusal ends the episode. The reward is the game's own `won`
(1), anything else (lost, unfinished) 0.

The oracle (`TextWorldInteraction.oracle`) plays the game's policy commands (TextWorld's walkthrough,
recomputed from the live state each turn).

Generation is slow (Inform 7 compiles each game: seconds to tens of seconds per case here), so these
environments suit small splits, and `bootcamp list` shows them like any other.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

from ptbench.bootcamp.adapters import load_library
from ptbench.bootcamp.adapters.outcome import game_config
from ptbench.bootcamp.adapters.turns import ACTION_LINE, EngineGame, EngineGenerator, EngineInteraction
from ptbench.bootcamp.api import Identity, register_generator, register_interaction

EXTRA = "bootcamp-textworld"
PREFIX = "tw."
SOURCE = "textworld"
DOMAIN = "TextWorld generated text games (multi-turn, its engine)"
# family -> (TextWorld challenge, its settings); custom: (None, GameOptions fields)
FAMILIES: dict[str, tuple[str | None, dict[str, Any]]] = {
    "simple": ("tw-simple", {"rewards": "dense", "goal": "detailed", "test": False}),
    "coin_collector": ("tw-coin_collector", {"level": 5}),
    "treasure_hunter": ("tw-treasure_hunter", {"level": 5}),
    "cooking": (
        "tw-cooking",
        {"recipe": 2, "take": 1, "go": 6, "open": True, "cook": True, "cut": True, "drop": False, "split": "train"},
    ),  # fmt: skip
    "custom": (None, {"nb_rooms": 5, "nb_objects": 10, "quest_length": 4}),
}


def library() -> ModuleType:
    return load_library("textworld", "TextWorld", EXTRA)


def names() -> list[str]:
    return sorted(FAMILIES)


def describe(name: str) -> dict[str, str]:
    challenge, settings = FAMILIES[name]
    return {"domain": f"text game (TextWorld {challenge or 'tw-make custom'})", "tools": "-",
            "levels": ", ".join(f"{k}={v}" for k, v in settings.items())}  # fmt: skip


def cache_dir() -> Path:
    return Path(os.environ.get("PTBENCH_TEXTWORLD_CACHE") or Path.home() / ".cache" / "ptbench" / "textworld")


def game_file(identity: Identity) -> Path:
    """The compiled game of a case, made on first use (atomically: concurrent makers write the same bytes)."""
    family = TextWorldGenerator.check(identity["game"])
    seed = int(identity["seed"])
    challenge, settings = FAMILIES[family]
    key = hashlib.sha256(json.dumps([library().__version__, family, settings, seed]).encode()).hexdigest()[:16]
    path = cache_dir() / f"{family}-{seed}-{key}.z8"
    if path.is_file():
        return path
    tw = library()
    from textworld.generator import compile_game

    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent) as work:
        options = tw.GameOptions()
        options.seeds = seed
        options.path = str(Path(work) / path.name)
        options.file_ext = ".z8"
        if challenge is None:
            options.nb_rooms, options.nb_objects = settings["nb_rooms"], settings["nb_objects"]
            options.quest_length = settings["quest_length"]
            game = tw.generator.make_game(options)
        else:
            from textworld.challenges import CHALLENGES

            # the cooking recipe comes from its own seed: the case's (+1: 0 would mean "no new recipe")
            extra = {"recipe_seed": seed + 1} if family == "cooking" else {}
            game = CHALLENGES[challenge][1]({**settings, **extra}, options)
        compiled = Path(compile_game(game, options))
        # the game's .json (its quests and walkthrough: what the engine's infos read) first, the .z8 last:
        # a .z8 in the cache means both are there
        os.replace(compiled.with_suffix(".json"), path.with_suffix(".json"))
        os.replace(compiled, path)
    return path


class Play(EngineGame):
    """One game in progress on TextWorld's engine."""

    def __init__(self, identity: Identity) -> None:
        tw = library()
        infos = tw.EnvInfos(policy_commands=True, won=True, lost=True, objective=True)
        self.env = tw.start(str(game_file(identity)), request_infos=infos)
        self.state = self.env.reset()
        self.first = f"{self.state.get('objective') or ''}\n\n{self.state.feedback}".strip()

    def step(self, command: str) -> str:
        self.state, _score, done = self.env.step(command)
        self.done = bool(done)
        if self.done:
            self.env.close()
        return str(self.state.feedback).strip()

    def won(self) -> bool:
        return bool(self.state.get("won"))

    def finish(self) -> None:
        self.done = True
        self.env.close()


_REPLY = "Reply with one line `Action: <command>` per turn (e.g. `Action: look`)."


@register_generator("textworld")
class TextWorldGenerator(EngineGenerator):
    """Params: game (a family: simple, coin_collector, treasure_hunter, cooking, custom). A case is (family, seed)."""

    kind = "TextWorld game family"
    names = staticmethod(names)
    library = staticmethod(library)
    make = Play
    seed_bits = 31
    instructions = _REPLY


@register_interaction("textworld")
class TextWorldInteraction(EngineInteraction):
    make = Play
    action = ACTION_LINE
    refusal = _REPLY

    def oracle(self, state: Play, identity: Identity) -> str | None:
        """The next of TextWorld's policy commands (its walkthrough from the live state)."""
        commands: list[str] = [] if state.done else list(state.state.get("policy_commands") or [])
        return f"Action: {commands[0]}" if commands else None


def bootcamp_dict(family: str, **splits: int) -> dict[str, Any]:
    name = f"{PREFIX}{TextWorldGenerator.check(family)}"
    return game_config(name, "textworld", family, turns=100, max_tokens=256, **splits)
