"""TextWorldExpress's games as multi-turn ptbench environments (`pip install
'ptbench[bootcamp-textworld-express]'` and a Java runtime: Debian's `default-jre-headless`).

Each of its games is one environment `twx.<game>`: CookingWorld (read a recipe, gather, cut and cook
the ingredients), TextWorld Commonsense (put objects where they belong), Coin Collector, Map Reader
(read a map, fetch a coin, bring it back), Arithmetic (solve a word problem, box the item with that
quantity), Sorting (box objects by quantity, units mixed), Simon Says, Simon Says from memory (the
whole sequence is given once) and Pecking Order (follow an instructions book). A case is (game,
seed, fold, parameters): the seed and the game's parameters (rooms, doors, ingredients, distractors,
sequence length ... : `FAMILIES`, each drawn from the range the engine accepts) come from the case's
rng; the fold (the engine's own train/dev/test split of object names) is a generator param, `train`
by default. The game is generated and played in TextWorldExpress's own engine (a JVM through py4j):
the task description and first observation are the user turn, each observation after an action the
feedback; the model answers one line `Action: <command>`. An answer with no such line is refused,
the third refusal ends the episode. The reward is the engine's task success (1), anything else
(a task failure such as a wrong item in the box, the step limit, unfinished) 0; the engine's partial
score is never paid.

The oracle (`TextWorldExpressInteraction.oracle`) plays the engine's gold action sequence for the
case. For Coin Collector and Commonsense that path has a random walk in it that differs from run to
run (the game itself does not: prompts and observations are the same bytes in every interpreter);
every one wins.

Two are TextWorld's tasks on another engine, one family each (docs/bootcamp.md): `twx.coin` is
`tw.coin_collector`, `twx.cookingworld` a reimplementation of `tw.cooking`'s recipe games.
"""

from __future__ import annotations

import random
import shutil
from types import ModuleType
from typing import Any

from ptbench.bootcamp.adapters import load_library
from ptbench.bootcamp.adapters.outcome import game_config
from ptbench.bootcamp.adapters.turns import ACTION_LINE, EngineGame, EngineGenerator, EngineInteraction, EnginePool
from ptbench.bootcamp.api import Identity, register_generator, register_interaction
from ptbench.core.errors import UserError

EXTRA = "bootcamp-textworld-express"
PREFIX = "twx."
SOURCE = "textworld-express"
DOMAIN = "TextWorldExpress text games (multi-turn, its engine)"
# TextWorld's tasks on another engine, and Simon Says' memory mode (bootcamp/families.py)
SAME_FAMILY = {
    "twx.coin": "tw.coin_collector",
    "twx.cookingworld": "tw.cooking",
    "twx.simonsays_memory": "twx.simonsays",
}
STEP_LIMIT = 200  # the engine's move limit and the turn limit (the longest gold path seen: 113, CookingWorld)
FOLDS = ("train", "dev", "test")
_DOORS = {"includeDoors": (0, 1), "limitInventorySize": (0, 1)}
_SIMON = {"gameLength": (2, 12), "numDistractors": (1, 5), "verbose": (0, 1)}
# game -> (the engine's game, its fixed parameters, the ranges each case draws the others from). The
# ranges are the engine's own bounds, except Map Reader's rooms: under 8 it often finds no two rooms
# its distance apart and generates nothing.
FAMILIES: dict[str, tuple[str, dict[str, int], dict[str, tuple[int, int]]]] = {
    "cookingworld": ("cookingworld", {}, {"numLocations": (1, 11), "numIngredients": (1, 5),
                                          "numDistractorItems": (0, 10), **_DOORS}),
    "twc": ("twc", {}, {"numLocations": (1, 3), "numItemsToPutAway": (1, 4), **_DOORS}),
    "coin": ("coin", {}, {"numLocations": (2, 11), "numDistractorItems": (0, 10), **_DOORS}),
    "mapreader": ("mapreader", {}, {"numLocations": (8, 15), "maxDistanceApart": (1, 4),
                                    "maxDistractorItemsPerLocation": (0, 3), **_DOORS}),
    "arithmetic": ("arithmetic", {}, {}),
    "sorting": ("sorting", {}, {}),
    "simonsays": ("simonsays", {"memorization": 0}, _SIMON),
    "simonsays_memory": ("simonsays", {"memorization": 1}, _SIMON),
    "peckingorder": ("peckingorder", {}, {}),
}  # fmt: skip


def library() -> ModuleType:
    module = load_library("textworld_express", "TextWorldExpress", EXTRA)
    if shutil.which("java") is None:
        raise UserError("TextWorldExpress needs a Java runtime on PATH; apt-get install default-jre-headless")
    return module


def names() -> list[str]:
    library()
    return sorted(FAMILIES)


def describe(name: str) -> dict[str, str]:
    engine, fixed, ranges = FAMILIES[name]
    levels = [f"{k}={v}" for k, v in fixed.items()] + [f"{k}={a}-{b}" for k, (a, b) in ranges.items()]
    return {"domain": f"text game (TextWorldExpress {engine})", "tools": "-", "levels": ", ".join(levels) or "-"}


POOL = EnginePool(lambda: library().TextWorldExpressEnv(envStepLimit=STEP_LIMIT))


def game_params(identity: Identity) -> tuple[str, int, str, str]:
    """(engine game, seed, fold, its parameter string) of a case, each checked: a case is data another
    process wrote, and what the engine gets must be one of the games and ranges this adapter draws."""
    game = TextWorldExpressGenerator.check(identity.get("game"))
    engine, fixed, ranges = FAMILIES[game]
    seed, fold, params = identity.get("seed"), identity.get("fold"), identity.get("params")
    ok = type(seed) is int and seed >= 0 and isinstance(fold, str) and fold in FOLDS
    ok = ok and isinstance(params, dict) and set(params) == set(ranges)
    if not (ok and isinstance(params, dict) and all(type(params[k]) is int and a <= params[k] <= b
                                                    for k, (a, b) in ranges.items())):  # fmt: skip
        raise UserError(f"twx.{game}: case {identity!r} is not one this adapter makes (seed, fold, params)")
    assert isinstance(seed, int) and isinstance(fold, str)
    return engine, seed, fold, ",".join(f"{k}={v}" for k, v in sorted({**fixed, **params}.items()))


class Play(EngineGame):
    """One case in play on a borrowed engine (given back when the game ends or the play is dropped)."""

    def __init__(self, identity: Identity, gold: bool = True) -> None:
        engine, seed, fold, params = game_params(identity)
        self.env, self.release = POOL.lend(self)
        observation, self.infos = self.env.reset(seed=seed, gameFold=fold, gameName=engine, gameParams=params,
                                                 generateGoldPath=gold)  # fmt: skip
        self.first = f"{self.infos['taskDescription']}\n\n{observation}".strip()
        self.gold: list[str] = list(self.env.getGoldActionSequence()) if gold else []
        self.moves = 0

    def step(self, action: str) -> str:
        observation, _reward, done, self.infos = self.env.step(action)
        self.moves += 1
        self.done = bool(done)
        if self.done:
            self.release()
        return str(observation).strip()

    def won(self) -> bool:
        """The engine's task success at its full score (a failure, e.g. a wrong item boxed, ends it too)."""
        return bool(self.infos.get("tasksuccess")) and float(self.infos.get("score", 0)) >= 1.0

    def finish(self) -> None:
        self.done = True
        self.infos = {}
        self.release()


_REPLY = "Reply with one line `Action: <command>` per turn (e.g. `Action: look around`)."


@register_generator("textworld_express")
class TextWorldExpressGenerator(EngineGenerator):
    """Params: game (one of `FAMILIES`), fold (train, dev or test: the engine's split of object names;
    train by default). A case is (game, seed, fold, the game's parameters drawn from their ranges)."""

    kind = "TextWorldExpress game"
    names = staticmethod(names)
    library = staticmethod(library)
    make = Play
    seed_bits = 31
    instructions = _REPLY

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.fold = self.check_fold(params.get("fold", "train"))

    @staticmethod
    def check_fold(fold: Any) -> str:
        if fold not in FOLDS:
            raise UserError(f"TextWorldExpress fold {fold!r} is not one of {', '.join(FOLDS)}")
        return str(fold)

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> None:
        super().check_params(params)
        cls.check_fold(params.get("fold", "train"))

    def case(self, rng: random.Random) -> Identity:
        seed = rng.getrandbits(self.seed_bits)
        drawn = {k: rng.randint(a, b) for k, (a, b) in sorted(FAMILIES[self.game][2].items())}
        return {"game": self.game, "seed": seed, "fold": self.fold, "params": drawn}

    def open(self, identity: Identity) -> Play:
        return Play(identity, gold=False)

    def dedup_key(self, identity: Identity) -> str:
        return f"{identity['game']}/{identity['fold']}/{identity['seed']}/{game_params(identity)[3]}"


@register_interaction("textworld_express")
class TextWorldExpressInteraction(EngineInteraction):
    make = Play
    action = ACTION_LINE
    refusal = _REPLY

    def oracle(self, state: Play, identity: Identity) -> str | None:
        """The engine's gold action sequence for this case, one action per turn."""
        if state.done or state.moves >= len(state.gold):
            return None
        return f"Action: {state.gold[state.moves]}"


def bootcamp_dict(game: str, **splits: int) -> dict[str, Any]:
    name = f"{PREFIX}{TextWorldExpressGenerator.check(game)}"
    return game_config(name, "textworld_express", game, turns=STEP_LIMIT, max_tokens=256, **splits)
