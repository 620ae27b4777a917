"""reasoning-gym's procedural datasets as ptbench environments (`pip install 'ptbench[bootcamp-reasoning-gym]'`).

Each of its dataset generators is a single-turn environment `rg.<dataset>`: the question is the user
turn, the answer goes in `<answer>…</answer>` (the library's own convention and system prompt), and
the library's own `score_answer` is the reward. The environment's config uses the dataset's default
configuration; its curricula are levels a YAML names (`params: {dataset: D, level: L}` sets every
attribute of the dataset's curriculum to min(L, its top level)); `bootcamp list` shows which levels
the library's own config validation accepts.

Determinism: case k draws a 32-bit seed from ptbench's per-case `random.Random` and builds a
one-item dataset with it; reasoning-gym derives that item from `random.Random(seed + index)` only,
so the same seed gives the same case (the catalogue test generates each environment twice and
compares the bytes). Five generators also read the order of sets of strings, which follows the hash
seed: `HASH_SEEDED` ones are made and scored in the adapters' hash-seeded worker (`_worker.py`).
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
from functools import cache, lru_cache
from types import ModuleType
from typing import Any

from ptbench.bootcamp.adapters import load_library
from ptbench.bootcamp.adapters._rg_oracles import ORACLES, rush_hour_legal, same_word_count
from ptbench.bootcamp.adapters.turns import first_case
from ptbench.bootcamp.api import Generator, Identity, RewardCalculator, register_generator, register_reward
from ptbench.core.errors import UserError

EXTRA = "bootcamp-reasoning-gym"
SOURCE = "reasoning-gym"
DOMAIN = "reasoning-gym procedural datasets (single turn, the library's scorer)"
# of a task family another environment is counted as (bootcamp/families.py)
SAME_FAMILY = {"rg.rush_hour": "ta.RushHour-v0", "rg.mini_sudoku": "rg.sudoku"}
PREFIX = "rg."
LEVELS = (0, 1, 2)  # curriculum levels offered as ptbench levels (l0 easiest)
# Datasets left out of the catalogue, and why (the reasons are printed by `bootcamp list --json`).
EXCLUDED = {
    "composite": "a mixture of other datasets (ptbench suites mix environments themselves)",
    "propositional_logic": "its scorer credits any consequence of the premises that is no tautology: a premise "
    "copied from the question scored 1 on 19 of 20 cases (the task asks for no particular conclusion)",
    "codeio": "not deterministic: the same seed gave other cases (it samples from its data files outside the seed)",
}
# Found by `ptbench bootcamp verify`: a fresh interpreter (another hash seed) made other cases, since
# these generators draw from sets of strings (`rng.choice(list(a_set))`) or sympy's, whose order
# follows the hash seed. Their cases are made and scored in the hash-seeded worker (adapters/_worker.py).
# word_ladder's answer is one of the shortest ladders, the first its BFS over sets of words meets.
HASH_SEEDED = {"isomorphic_strings", "knight_swap", "list_functions", "polynomial_multiplication", "ransom_note",
               "word_ladder"}  # fmt: skip
# ... and those whose generator also draws from the global `random` (list_functions' generators call
# random.randint): made and scored in a fork of the worker with the global RNGs seeded by the case's seed
# (the worker itself gave other cases in a fresh interpreter).
SEEDED_FORK = {"list_functions"}
# Checks ptbench adds to a library scorer that `bootcamp verify` caught crediting a wrong answer.
_HEDGE = re.compile(r"(?i)\bor\b")


def _puzzle24_numbers(extracted: str, entry: dict[str, Any]) -> bool:
    """Its scorer checks that the expression makes 24 with four numbers, not that they are the case's
    numbers: another case's answer scored 1."""
    return sorted(int(n) for n in re.findall(r"\d+", extracted)) == sorted(entry["metadata"]["numbers"])


def _exact_bool(extracted: str, entry: dict[str, Any]) -> bool:
    """game_of_life_halting's scorer compares `bool(text)` with `bool(answer)`, true for any non-empty
    text ('banana' scored 1 against 'False'): the library's scorer is wrong, so ptbench checks the
    'True' or 'False' the prompt asks for itself (and the library's still has to agree)."""
    return extracted.strip().lower() == str(entry["answer"]).strip().lower()


EXTRA_CHECKS = {"puzzle24": _puzzle24_numbers, "game_of_life_halting": _exact_bool,
                "letter_jumble": same_word_count, "rush_hour": rush_hour_legal}  # fmt: skip
# Slow to generate (tens of seconds for a few cases: data files loaded, search-based generators):
# listed and usable, left out of the sampled catalogue test so CI stays fast.
SLOW = {"arc_agi", "rearc", "sokoban", "group_anagrams", "figlet_font", "bf", "knight_swap", "rush_hour", "word_ladder"}
_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)


def library() -> ModuleType:
    load_library("time_machine", "time-machine", EXTRA)  # the worker's seeded forks pin the clock with it
    return load_library("reasoning_gym.factory", "reasoning-gym", EXTRA)


def dataset_names() -> list[str]:
    return sorted(n for n in library().DATASETS if n not in EXCLUDED)


names = dataset_names


def describe(dataset: str) -> dict[str, str]:
    module = library().DATASETS[dataset][0].__module__.split(".")
    return {
        "domain": f"reasoning-gym: {module[1] if len(module) > 2 else 'misc'}",
        "tools": "-",
        "levels": "default" + "".join(f", level {lv}" for lv in levels(dataset) if lv is not None),
    }


def check_dataset(name: Any) -> str:
    names = dataset_names()
    if not isinstance(name, str) or name not in names:
        close = [n for n in names if isinstance(name, str) and (name in n or n in name)][:5]
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise UserError(f"reasoning-gym has no dataset {name!r}{hint}; `ptbench bootcamp list` shows them all")
    return name


@cache
def level_config(dataset: str, level: int | None) -> dict[str, Any]:
    """The dataset's configuration fields (without seed and size) at a curriculum level (None: the
    default configuration). Fields keep their objects (some are nested configs)."""
    factory = library()
    if level is not None and factory.has_curriculum(dataset):
        curriculum = factory.create_curriculum(dataset)
        for attr, definition in curriculum.attributes.items():
            curriculum.set_attr_level(attr, min(level, len(definition.levels) - 1))
        config = curriculum.generate_configuration({"seed": 0, "size": 1})
    else:
        config = factory.DATASETS[dataset][1]()
    return {f.name: getattr(config, f.name) for f in dataclasses.fields(config) if f.name not in ("seed", "size")}


@cache
def levels(dataset: str) -> tuple[int | None, ...]:
    """The curriculum levels whose configuration the dataset accepts (some libraries' level 0 is
    below their own minimum); (None,) where it has no curriculum or no valid level."""
    if not library().has_curriculum(dataset):
        return (None,)
    config_class = library().DATASETS[dataset][1]
    ok = []
    for lv in LEVELS:
        try:  # the config's own checks, as the dataset runs them, without making any data
            config = config_class(**level_config(dataset, lv), seed=0, size=1)
            if callable(getattr(config, "validate", None)):
                config.validate()
        except Exception:  # noqa: BLE001 - the library refuses its own level: leave the level out
            continue
        ok.append(lv)
    return tuple(ok) or (None,)


@lru_cache(maxsize=4096)
def _entry(dataset: str, level: int | None, overrides: str, seed: int) -> dict[str, Any]:
    """The library's item for a case: a one-item dataset at that seed (the scorer reads the very
    objects the generator made, so no metadata has to survive a trip through JSON)."""
    config = {**level_config(dataset, level), **json.loads(overrides)}
    return library().create_dataset(dataset, **config, seed=seed, size=1)[0]


def _case_fields(dataset: str, level: int | None, overrides: str, seed: int) -> dict[str, Any]:
    entry = _entry(dataset, level, overrides, seed)
    answer = entry["answer"]
    fields = {
        "question": entry["question"],
        "answer": answer if answer is None or isinstance(answer, str) else json.dumps(answer, default=str),
    }
    if answer is None and dataset in ORACLES:  # ptbench's reference answer (_rg_oracles.py)
        fields["solution"] = ORACLES[dataset](entry)
    return fields


def _reference(identity: Identity) -> str | None:
    return identity["answer"] if identity["answer"] is not None else identity.get("solution")


def _library_score(dataset: str, level: int | None, overrides: str, seed: int, extracted: str) -> float:
    """The dataset's own score of `extracted` on the library's item, after ptbench's extra check."""
    entry = _entry(dataset, level, overrides, seed)
    extra = EXTRA_CHECKS.get(dataset)
    if extra is not None and not extra(extracted, entry):
        return 0.0
    return float(_scorer(dataset)(extracted, entry))


@cache
def _scorer(dataset: str) -> Any:
    """The dataset's `score_answer`, made once per dataset: the library builds a default-config
    dataset for every scorer it hands out (arc_agi loads its task files for each: 1.5 s a score),
    and no scorer keeps state between calls (none assigns to or draws from its dataset)."""
    return library().get_score_answer_fn(dataset)


def _in_worker(function: str, dataset: str, *args: Any) -> Any:
    """`function(dataset, level, overrides, seed, ...)` in the hash-seeded worker (a seeded fork of it for
    SEEDED_FORK datasets: their case's seed, the fourth argument, seeds the global RNGs there)."""
    from ptbench.bootcamp.adapters import _worker

    seed = int(args[2]) if dataset in SEEDED_FORK else None
    return _worker.call(f"{__name__}:{function}", dataset, *args, seed=seed)


@register_generator("reasoning_gym")
class ReasoningGymGenerator(Generator):
    """Params: dataset (a reasoning-gym dataset name), level (curriculum level; omit for the default
    configuration), config (fields of the dataset's config that override the level's)."""

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.dataset = check_dataset(params.get("dataset"))
        self.level = params.get("level")
        if self.level is not None and (not isinstance(self.level, int) or self.level < 0):
            raise UserError(f"reasoning_gym level {self.level!r}: a curriculum level is an integer >= 0")
        self.overrides = json.dumps(params.get("config") or {}, sort_keys=True)

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> None:
        """Validation before anything runs: the library is installed and knows the dataset."""
        check_dataset(params.get("dataset"))

    def case(self, rng: random.Random) -> Identity:
        # an empty reference is an ill-made item (base_conversion writes 0 as '' in bases other than 2
        # and 16, in its question too; a scramble that undoes itself leaves rubiks_cube nothing to solve):
        # the next seed is drawn instead (the first draw stands wherever the reference is not empty)
        return first_case(lambda: self._draw(rng), lambda i: _reference(i) != "", f"rg.{self.dataset}",
                          "an empty reference answer on each")  # fmt: skip

    def _draw(self, rng: random.Random) -> Identity:
        seed = rng.getrandbits(32)
        args = (self.dataset, self.level, self.overrides, seed)
        fields = _in_worker("_case_fields", *args) if self.dataset in HASH_SEEDED else _case_fields(*args)
        return {"dataset": self.dataset, "level": self.level, "config": json.loads(self.overrides), "seed": seed,
                **fields}  # fmt: skip

    def system_prompt(self) -> str | None:
        import reasoning_gym.utils

        return reasoning_gym.utils.SYSTEM_PROMPTS["default"]

    def prompt(self, identity: Identity) -> str:
        return identity["question"]

    def dedup_key(self, identity: Identity) -> str:
        return identity["question"]

    def reference_completion(self, identity: Identity) -> str | None:
        # the library's answer, else ptbench's solver's (_rg_oracles.py); None where neither has one
        reference = _reference(identity)
        return None if reference is None else f"<answer>{reference}</answer>"


@register_reward("reasoning_gym")
class ReasoningGymReward(RewardCalculator):
    """The last `<answer>…</answer>` of the final message, scored by the case's own dataset's
    `score_answer` on the library's own item (rebuilt from the case's seed, so one reward serves a
    mixture). Binary by default: 1 only for full credit, since several scorers give a little credit
    to any text (0.01 for a wrong answer, string similarity); `partial: true` keeps their partial
    credit. A score outside [0, 1] or a scorer that raises counts as 0."""

    def extract(self, text: str) -> str | None:
        found = _ANSWER.findall(text or "")
        return found[-1].strip() if found else None

    def verify(self, extracted: str, identity: Identity) -> float:
        name = check_dataset(identity.get("dataset"))
        answer = identity.get("answer")
        if answer is not None and _HEDGE.search(extracted) and not _HEDGE.search(answer):
            # "A or B" where the answer has no "or" is a hedge: several scorers (fractions, integrals,
            # polynomials, gsm_symbolic, sokoban) credit it when A is right (found by bootcamp verify)
            return 0.0
        try:
            # the item is rebuilt from the seed where the case was made (the worker for HASH_SEEDED)
            args = (name, identity.get("level"), json.dumps(identity.get("config") or {}, sort_keys=True),
                    int(identity["seed"]), extracted)  # fmt: skip
            score = float(_in_worker("_library_score", *args) if name in HASH_SEEDED else _library_score(*args))
        except Exception:  # noqa: BLE001 - a scorer that fails on a hostile answer gives no reward
            return 0.0
        if not 0.0 <= score <= 1.0:
            return 0.0
        return score if self.params.get("partial") else float(score >= 1.0)


def bootcamp_dict(dataset: str, seed: int = 1234, test: int = 50, train: int = 500) -> dict[str, Any]:
    """A bootcamp config for one dataset: its curriculum levels (or its default), the library's reward."""
    check_dataset(dataset)
    return {
        "name": f"{PREFIX}{dataset}",
        "seed": seed,
        # the library's default configuration (broad): curriculum levels 0-2 are narrow at the bottom
        # (level 0 of leg_counting has under 200 distinct cases), so a YAML names them (params.level)
        "levels": [{"name": "default", "generator": "reasoning_gym", "params": {"dataset": dataset}}],
        "splits": {"test": test, "train": train},
        "reward": {"name": "reasoning_gym"},
        "limits": {"max_assistant_turns": 1, "max_tool_calls": 0},
        "sampling": {"temperature": 0.0, "max_tokens": 1024},
    }
