"""chuk-puzzles-gym's logic-puzzle families as ptbench environments (`pip install 'ptbench[bootcamp-puzzles]'`).

Each family is a single-turn environment `puz.<family>` with the library's three difficulties as
levels: the prompt is the library's rules and board (plus, where the board leaves it out, the full
data: every cage, the regions, the clue lists) and the one answer format of the family; the model
gives its complete solution in `<answer>…</answer>`, exactly once. The reward is ptbench's own exact
check of the family's rules (`_puzzle_checks.py`): every valid solution scores 1, not only the
library's stored one (its `is_complete` compares with that grid, and KenKen's skips rows and columns).
The reference is the library's stored solution (Kakuro's breaks its own clues: ptbench's solver's
there, `_puzzle_cases.solve_kakuro`); a seed whose stored solution breaks the rules the
prompt states (Binary's repeats rows it forbids) is skipped, so every case has a reference that
scores 1 (`turns.first_case`, a bounded draw).

Determinism: every game draws only from its own `random.Random(seed)`, the seed drawn from ptbench's
per-case RNG; the sets it iterates hold ints and int tuples, whose order no hash seed changes.
"""

from __future__ import annotations

import random
import re
from functools import cache
from types import ModuleType
from typing import Any

from ptbench.bootcamp.adapters import load_library
from ptbench.bootcamp.api import Generator, Identity, RewardCalculator, register_generator, register_reward
from ptbench.core.errors import UserError

EXTRA = "bootcamp-puzzles"
SOURCE = "chuk-puzzles-gym"
DOMAIN = "logic-puzzle families (single turn, ptbench's exact check of the rules)"
PREFIX = "puz."
LEVELS = ("easy", "medium", "hard")
_DUPLICATE = "another installed source has this family"
# installed, though another installed source has the family: counted as that one (bootcamp/families.py)
SAME_FAMILY = {"puz.knapsack": "combinatorial", "puz.sudoku": "rg.sudoku", "puz.futoshiki": "rg.futoshiki",
               "puz.nqueens": "rg.n_queens", "puz.lights_out": "ta.LightsOut-v0",
               "puz.graph_coloring": "rg.graph_color", "puz.slitherlink": "ta.Slitherlink-v0"}  # fmt: skip
EXCLUDED = {
    "cryptarithmetic": _DUPLICATE + " (rg.cryptarithm, ta.Cryptarithm-v0); 7 s a case",
    "einstein": _DUPLICATE + " (rg.zebra_puzzles, ta.LogicPuzzle-v0)",
    "logic_grid": _DUPLICATE + " (rg.zebra_puzzles, ta.LogicPuzzle-v0)",
    "mastermind": _DUPLICATE + " (ta.Mastermind-v0, gem.Mastermind); multi-turn, not single-turn",
    "minesweeper": _DUPLICATE + " (ta.Minesweeper-v0, gem.Minesweeper); multi-turn, not single-turn",
    "sokoban": _DUPLICATE + " (rg.sokoban, ta.Sokoban-v0)",
    "rush_hour": _DUPLICATE + " (rg.rush_hour, ta.RushHour-v0)",
}
SYSTEM_PROMPT = (
    "Solve the puzzle. Think it through, then give your complete solution once, inside <answer></answer> "
    "tags, in exactly the format the puzzle asks for and nothing else inside the tags."
)
_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)


def library() -> ModuleType:
    return load_library("chuk_puzzles_gym", "chuk-puzzles-gym", EXTRA)


def _families() -> dict[str, Any]:
    from ptbench.bootcamp.adapters._puzzle_cases import FAMILIES

    return FAMILIES


@cache
def names() -> list[str]:
    library()
    return sorted(_families())


def check_family(name: Any) -> str:
    if not isinstance(name, str) or name not in names():
        why = EXCLUDED.get(name) if isinstance(name, str) else None
        hint = f" (left out: {why})" if why else ""
        raise UserError(f"chuk-puzzles-gym has no environment {name!r}{hint}; `ptbench bootcamp list` shows them all")
    return name


def describe(name: str) -> dict[str, str]:
    also = f"; also {SAME_FAMILY[PREFIX + name]}" if PREFIX + name in SAME_FAMILY else ""
    return {"domain": f"logic puzzle (chuk-puzzles-gym{also})", "tools": "-", "levels": ",".join(LEVELS)}


@register_generator("puzzles")
class PuzzleGenerator(Generator):
    """Params: family (a `puz.` family), difficulty (easy, medium or hard). A case is the library's
    puzzle of one seed: the prompt's text, the puzzle's data for the check, and the reference."""

    requires = (("chuk_puzzles_gym", EXTRA),)

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.check_params(params)
        self.family, self.difficulty = params["family"], params.get("difficulty", "easy")

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> None:
        super().check_params(params)
        check_family(params.get("family"))
        if params.get("difficulty", "easy") not in LEVELS:
            raise UserError(f"puzzles: difficulty {params.get('difficulty')!r} is not one of {', '.join(LEVELS)}")

    def case(self, rng: random.Random) -> Identity:
        from ptbench.bootcamp.adapters._puzzle_cases import make
        from ptbench.bootcamp.adapters.turns import first_case

        def draw() -> Identity:
            seed = rng.getrandbits(32)
            text, data, reference = make(self.family, self.difficulty, seed)
            return {"family": self.family, "difficulty": self.difficulty, "seed": seed, "puzzle": text,
                    "data": data, "reference": reference}  # fmt: skip

        def keep(identity: Identity) -> bool:
            return bool(_families()[self.family].check(identity["reference"], identity["data"]))

        return first_case(draw, keep, f"{PREFIX}{self.family}", "the library's stored solution broke its rules in all")

    def system_prompt(self) -> str | None:
        return SYSTEM_PROMPT

    def prompt(self, identity: Identity) -> str:
        answer = _families()[identity["family"]].answer
        return f"{identity['puzzle']}\n\nAnswer format, inside <answer></answer>: {answer}."

    def dedup_key(self, identity: Identity) -> str:
        return identity["puzzle"]

    def reference_completion(self, identity: Identity) -> str | None:
        return f"<answer>\n{identity['reference']}\n</answer>"


@register_reward("puzzles")
class PuzzleReward(RewardCalculator):
    """1 if the final message holds exactly one `<answer>…</answer>` and it satisfies every rule of the
    case's puzzle (ptbench's check), else 0: two answers, a hedge, a list or a claimed score is 0."""

    def extract(self, text: str) -> str | None:
        found = _ANSWER.findall(text or "")
        return found[0] if len(found) == 1 else None

    def verify(self, extracted: str, identity: Identity) -> float:
        family = check_family(identity.get("family"))
        try:
            return 1.0 if _families()[family].check(extracted, identity["data"]) else 0.0
        except (KeyError, IndexError, TypeError, ValueError):  # data or answer of the wrong shape: no reward
            return 0.0


def bootcamp_dict(family: str, seed: int = 1234, test: int = 50, train: int = 500) -> dict[str, Any]:
    check_family(family)
    return {
        "name": f"{PREFIX}{family}",
        "seed": seed,
        "levels": [{"name": d, "generator": "puzzles", "params": {"family": family, "difficulty": d}} for d in LEVELS],
        "splits": {"test": test, "train": train},
        "reward": {"name": "puzzles"},
        "limits": {"max_assistant_turns": 1, "max_tool_calls": 0},
        "sampling": {"temperature": 0.0, "max_tokens": 4096},
    }
