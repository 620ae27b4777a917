"""ptbench's own pencil-and-paper logic puzzles (Nikoli / Simon Tatham types) as environments `pencil.<family>`.

Each public module of this package is one family (`light_up.py` is `pencil.light_up`), found here with
pkgutil, so a new family is one new module and no other edit. A family module names `NAME` and `TITLE`
and has four pure functions (stdlib only, no global state):

- `generate(rng) -> dict`: a JSON-able case drawn only from `rng`: the puzzle and, under "solution",
  the solution it was made from (a random valid solution is planted first and the clues read off it,
  so every case is solvable);
- `prompt(case) -> str`: the rules, the puzzle and the exact answer format (never the solution);
- `answer(case) -> str`: the planted solution in that format (the reference);
- `check(case, text) -> bool`: whether `text` (inside the last `<answer>…</answer>`) is exactly one
  answer of the expected shape that keeps every rule and clue of the puzzle. It never compares with the
  planted solution: every valid solution scores.

The reward is 1.0 if `check` holds, else 0.0. This module is the adapter (PREFIX `pencil.`, SOURCE
ptbench): it registers itself when imported, and `ptbench.bootcamp.envs` imports it (the adapters'
loader imports that package), so `ptbench bootcamp list` shows every family.
"""

from __future__ import annotations

import importlib
import pkgutil
import random
import re
import sys
from functools import cache
from types import ModuleType
from typing import Any

from ptbench.bootcamp.adapters import register_adapter
from ptbench.bootcamp.api import Generator, Identity, RewardCalculator, register_generator, register_reward
from ptbench.core.errors import UserError

PREFIX = "pencil."
SOURCE = "ptbench"
EXTRA = "bootcamp"  # stdlib only: ptbench's own bootcamp extra is enough
DOMAIN = "pencil-and-paper logic puzzles (single turn, ptbench's generator and exact check of the rules)"
SYSTEM_PROMPT = (
    "Solve the puzzle. Think it through, then give your complete solution once, inside <answer></answer> "
    "tags, in exactly the format the puzzle asks for and nothing else inside the tags."
)
_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
_MEMBERS = ("NAME", "TITLE", "generate", "prompt", "answer", "check")


@cache
def families() -> dict[str, ModuleType]:
    """Every family module of this package, by its NAME (a module that lacks a member is an error)."""
    out = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        missing = [m for m in _MEMBERS if not hasattr(module, m)]
        if missing:
            raise TypeError(f"pencil family {module.__name__} lacks {', '.join(missing)}")
        if module.NAME != info.name:
            raise TypeError(f"pencil family {module.__name__}: NAME {module.NAME!r} is not its module's name")
        out[module.NAME] = module
    return dict(sorted(out.items()))


def family(name: Any) -> ModuleType:
    if not isinstance(name, str) or name not in families():
        raise UserError(f"ptbench has no pencil puzzle {name!r}; `ptbench bootcamp list` shows them all")
    return families()[name]


def names() -> list[str]:
    return list(families())


def describe(name: str) -> dict[str, str]:
    return {"domain": f"logic puzzle: {family(name).TITLE}", "tools": "-", "levels": "default"}


def library() -> ModuleType:
    return sys.modules[__name__]


@register_generator("pencil")
class PencilGenerator(Generator):
    """Params: family (a `pencil.` family). A case is the family's generated puzzle with its planted solution."""

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.check_params(params)
        self.family = params["family"]

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> None:
        super().check_params(params)
        family(params.get("family"))

    def case(self, rng: random.Random) -> Identity:
        return {"family": self.family, "case": family(self.family).generate(rng)}

    def system_prompt(self) -> str | None:
        return SYSTEM_PROMPT

    def prompt(self, identity: Identity) -> str:
        return str(family(identity["family"]).prompt(identity["case"]))

    def dedup_key(self, identity: Identity) -> str:
        return self.prompt(identity)

    def reference_completion(self, identity: Identity) -> str | None:
        return f"<answer>\n{family(identity['family']).answer(identity['case'])}\n</answer>"


@register_reward("pencil")
class PencilReward(RewardCalculator):
    """1 if the last `<answer>…</answer>` holds one solution that keeps every rule and clue of the case's
    puzzle (the family's `check`), else 0: a hedge, a list, prose or a claimed score is no solution."""

    def extract(self, text: str) -> str | None:
        found = _ANSWER.findall(text or "")
        return found[-1] if found else None

    def verify(self, extracted: str, identity: Identity) -> float:
        check = family(identity.get("family")).check
        try:
            return 1.0 if check(identity["case"], extracted) is True else 0.0
        except (KeyError, IndexError, TypeError, ValueError):  # a case or answer of the wrong shape: no reward
            return 0.0


def bootcamp_dict(name: str, seed: int = 1234, test: int = 50, train: int = 500) -> dict[str, Any]:
    family(name)
    return {
        "name": f"{PREFIX}{name}",
        "seed": seed,
        "levels": [{"name": "default", "generator": "pencil", "params": {"family": name}}],
        "splits": {"test": test, "train": train},
        "reward": {"name": "pencil"},
        "limits": {"max_assistant_turns": 1, "max_tool_calls": 0},
        "sampling": {"temperature": 0.0, "max_tokens": 4096},
    }


register_adapter(library())
