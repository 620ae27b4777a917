"""reasoning-core's task families as ptbench environments (`pip install 'ptbench[bootcamp-reasoning-core]'`).

Each task of the library's shipped roster (`reasoning_core.list_tasks()`: logic, state tracking,
mathematics, formal languages, planning, tables) is a single-turn environment `rc.<task>`: the
library's prompt is the user turn, the answer goes in `<answer>…</answer>`, and the task's own
`score_answer` on the case's own entry (its answer and metadata, kept in the case) is the reward.
The oracle is the library's own answer to the case.

Determinism: the library draws from the *global* `random` and numpy RNGs, from unseeded
`random.Random()`s, numpy `default_rng()`s (qualitative_causal_reasoning) and Faker's shared RNG,
reseeds the global RNG from the OS (gramforge's `generate` calls `random.seed(None)`: the
probabilistic and grammar tasks), iterates sets whose order follows the hash seed, and keeps caches
between cases. Case k is therefore made in the adapters' hash-seeded worker (`_worker.py`): a
fresh fork per case, every one of those RNGs seeded from a 32-bit seed drawn from ptbench's per-case
RNG, so the case is a function of that seed alone (the catalogue test and `bootcamp verify` make it
again in a fresh interpreter with another hash seed). Families that still gave other cases (time
budgets inside the generator: a slower or busier machine makes another case) are left out with the
reason in `EXCLUDED`; so are families whose scorer gives full credit to a hedge that no ptbench check
in front of it (`EXTRA_CHECKS`) can tell from an answer.

The library's auto-generated tasks that pass ptbench's verification are made and scored by this same
generator and reward, listed apart as `rcg.<task>` (adapters/reasoning_core_generated.py).
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Callable, Collection
from functools import cache
from types import ModuleType
from typing import Any

from ptbench.bootcamp.adapters import load_library
from ptbench.bootcamp.api import Generator, Identity, RewardCalculator, register_generator, register_reward
from ptbench.core.errors import UserError

EXTRA = "bootcamp-reasoning-core"
SOURCE = "reasoning-core"
DOMAIN = "reasoning-core task families (single turn, the library's scorer)"
PREFIX = "rc."
# Generation runs under the library's own SIGALRM timeout, which retries a slow case with more draws
# from the RNG (so a timeout would change the case on a slower machine): set far above any case here.
_GENERATION_TIMEOUT_S = 600
_NONDETERMINISTIC = (
    "not deterministic even in the hash-seeded worker (a fresh seeded fork per case): two processes gave other "
    "cases for the same seed (what it reads is outside any seed: regex_following matches and code_runnability runs "
    "code under wall-clock timeouts)"
)
_HEDGE = "its scorer gives full credit to a hedge that contains the answer ('A or not A')"
EXCLUDED = {
    "game_best_move": "generating needs pyggp (reasoning-core[gen], not on PyPI)",
    "game_forced_win": "generating needs pyggp (reasoning-core[gen], not on PyPI)",
    "metamath_entailment": "downloads the Metamath database at run time (nodes are offline)",
    "metamath_core_select": "downloads the Metamath database at run time (nodes are offline)",
    "inverse_math": _HEDGE + " (eight answer modes, each its own sympy checker: no one ptbench check fits)",
    "logic_derivation": "its scorer gives full credit to the answer followed by a list of other candidates",
    "code_runnability": _NONDETERMINISTIC,
    "constrained_continuation": _NONDETERMINISTIC,
    "regex_following": _NONDETERMINISTIC,
    "syntax_error_detection": "deterministic on a probe in the hash-seeded worker once it pinned random.seed(None) and "
    "numpy's default_rng(), but at 100 cases a fresh interpreter made other bytes for case 22 (verify, a loaded box)",
}


# Checks ptbench puts in front of a library scorer that `bootcamp verify` caught crediting a hedge ("R or
# W") or a candidate list ("W, R"): each scorer looks for the answer somewhere in the text (the last
# word, the first coordinate, the last TRUE/FALSE), so ptbench first asks for one answer only.
def _one_word(extracted: str, identity: Identity) -> bool:
    return len(extracted.strip().strip(".").strip("'\"").split()) == len(str(identity["answer"]).split())


def _one_match(pattern: str) -> Callable[[str, Identity], bool]:
    def check(extracted: str, identity: Identity) -> bool:
        found = re.findall(pattern, extracted, re.IGNORECASE)
        return len(found) == len(re.findall(pattern, identity["answer"], re.IGNORECASE))

    return check


def _grid(extracted: str, identity: Identity) -> bool:
    """The answer alone, in its type's form: counting its type's matches let '(aligned, below) or (4, 4)'
    through (a coordinate is no relation), and the scorer reads the first relation (verify, 100 cases)."""
    from reasoning_core.tasks.grid_navigation import SCORE_RE

    pattern = SCORE_RE[identity["metadata"]["answer_type"]]
    return re.fullmatch(rf"\s*\(?\s*(?:{pattern})\s*\)?\s*\.?\s*", extracted.lower()) is not None


def _one_expression(extracted: str, identity: Identity) -> bool:
    return not re.search(r"(?i)\bor\b|[,;\n]", extracted.strip())


def _analogy(extracted: str, identity: Identity) -> bool:
    """analogical_case_matching's scorer reads the case ids out of any text ('M1 or None' scored 1)
    and parses a sentence out of a longer one: ids alone, or no more clauses than the answer has."""
    metadata = identity["metadata"]
    if metadata.get("answer_format") == "index" and not metadata.get("no_match"):
        return re.fullmatch(r"\s*M\d+(?:\s*,?\s*M\d+)*\s*\.?\s*", extracted) is not None
    clause = r"(?i)\bor\b|[,;\n]"
    return len(re.findall(clause, extracted)) <= len(re.findall(clause, str(identity["answer"])))


EXTRA_CHECKS: dict[str, Callable[[str, Identity], bool]] = {
    "analogical_case_matching": _analogy,
    "coreference": _one_word,
    "grid_navigation": _grid,
    "sequential_induction": _one_expression,
    "reference_tracking": _one_match(r"[a-z]\d+"),
}
SYSTEM_PROMPT = (
    "Think the problem through, then give your final answer, in exactly the format the problem asks "
    "for, inside <answer></answer> tags, e.g. <answer>42</answer>."
)
_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)


def library() -> ModuleType:
    load_library("time_machine", "time-machine", EXTRA)  # the worker's seeded forks pin the clock with it
    return load_library("reasoning_core", "reasoning-core", EXTRA)


@cache
def names() -> list[str]:
    return sorted(n for n in library().list_tasks() if n not in EXCLUDED)


@cache
def _known() -> frozenset[str]:
    """The roster's tasks here and the generated ones adopted (`rcg.`, adapters/reasoning_core_generated.py)."""
    from ptbench.bootcamp.adapters import reasoning_core_generated

    return frozenset(names()) | frozenset(reasoning_core_generated.names())


def check_task(name: Any, listed: Collection[str] | None = None) -> str:
    """`name` if it is one of `listed` (default: every adapted task, roster or generated), else UserError."""
    known = _known() if listed is None else listed
    if not isinstance(name, str) or name not in known:
        close = [n for n in sorted(known) if isinstance(name, str) and (name in n or n in name)][:5]
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise UserError(f"reasoning-core has no task {name!r}{hint}; `ptbench bootcamp list` shows them all")
    return name


@cache
def _areas() -> dict[str, str]:
    from reasoning_core.registry import AREAS

    return {task: area for area, tasks in AREAS.items() for task in tasks}


def describe(name: str) -> dict[str, str]:
    return {"domain": f"reasoning-core: {_areas().get(name, 'misc')}", "tools": "-", "levels": "default"}


@cache
def _plain_tokenizer() -> None:
    """Tasks count their prompt's tokens with tiktoken's o200k encoding, which tiktoken downloads on
    first use (nodes are offline: a failed download, a warning, then a word count instead). With the
    length filter off (max_tokens=0) the count is only bookkeeping ptbench drops, so tasks get the
    library's own word counter and never reach for the network."""
    import reasoning_core.template as template

    class WordCounter:
        def encode(self, text: Any) -> list[str]:
            return str(text).split()

    template._load_tokenizer = WordCounter  # called once per Task


def _jsonable(value: Any) -> Any:
    """Metadata as JSON: numpy scalars and arrays (planning's counts) as Python numbers and lists."""
    import numpy as np

    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    return value


def prepare_in_worker(task: str, _seed: int) -> None:
    """The task's modules imported in the worker before it forks for a case (seconds for some), and
    what every example computes that a fork would compute again from scratch, done once here instead:
    the provenance its metadata records (the hash of the task module's source, parsed and deep-copied:
    a second for some tasks; the library's version; its git commit, a `git` run) and psutil, which the
    library's per-example timeout imports. Each is a cached function of files alone (no RNG draws),
    kept in underscore metadata that ptbench drops: no case changes."""
    import psutil  # noqa: F401
    from reasoning_core import runtime

    _plain_tokenizer()
    library().get_task(task).behavior_hash()
    runtime.generator_version("reasoning_core")
    runtime.generator_commit()
    grammar = sys.modules.get("reasoning_core.tasks.grammar")
    if grammar is not None:  # its terminals: 500 Faker words drawn at its import from an OS-seeded RNG
        # (parsing_derivation's words differed between two workers at case 0 of verify); made again here
        # from a fixed seed, in place (other modules may hold the list)
        import faker.generator

        faker.generator.random.seed(0)
        grammar.wordlist[:] = list(grammar.fake.words(nb=500, unique=True))


def _case_in_worker(task: str, seed: int) -> dict[str, Any]:
    """Run in the hash-seeded worker's fork for (task, seed), its RNGs seeded there: the library's
    example as the case's fields (underscore metadata, the library's bookkeeping such as timings, left
    out)."""
    _plain_tokenizer()
    # max_tokens=0: no case is dropped for its length, so which tokenizer counts it cannot change the case
    example = library().get_task(task).generate_example(timeout=_GENERATION_TIMEOUT_S, max_tokens=0)
    metadata = {k: v for k, v in dict(example.metadata).items() if not k.startswith("_")}
    return {"question": example.prompt, "answer": str(example.answer),
            "metadata": json.loads(json.dumps(_jsonable(metadata), default=str))}  # fmt: skip


def _generate(task: str, seed: int) -> dict[str, Any]:
    """The case for (task, seed), made in the hash-seeded worker (adapters/_worker.py): a fresh fork
    per case with the global `random` and numpy RNGs seeded, so neither the caller's hash seed, nor
    earlier cases' caches, nor an unseeded `random.Random()` changes it."""
    from ptbench.bootcamp.adapters import _worker

    library()  # the extra's one-line hint here, not a worker's traceback
    return dict(_worker.call(f"{__name__}:_case_in_worker", task, seed, seed=seed))


@register_generator("reasoning_core")
class ReasoningCoreGenerator(Generator):
    """Params: task (a reasoning-core task name). A case is (task, seed) with the library's prompt,
    answer and metadata (underscore fields, the library's bookkeeping such as timings, left out)."""

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.task = check_task(params.get("task"))

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> None:
        check_task(params.get("task"))

    def case(self, rng: random.Random) -> Identity:
        seed = rng.getrandbits(32)
        return {"task": self.task, "seed": seed, **_generate(self.task, seed)}

    def system_prompt(self) -> str | None:
        return SYSTEM_PROMPT

    def prompt(self, identity: Identity) -> str:
        return identity["question"]

    def dedup_key(self, identity: Identity) -> str:
        return identity["question"]

    def reference_completion(self, identity: Identity) -> str | None:
        return f"<answer>{identity['answer']}</answer>"


@register_reward("reasoning_core")
class ReasoningCoreReward(RewardCalculator):
    """The last `<answer>…</answer>` of the final message, scored by the case's task's own
    `score_answer` on the case's entry. Binary by default (1 only for full credit: several scorers
    give partial credit for string similarity); `partial: true` keeps it. A score outside [0, 1],
    a non-number or a scorer that raises counts as 0."""

    def extract(self, text: str) -> str | None:
        found = _ANSWER.findall(text or "")
        return found[-1].strip() if found else None

    def verify(self, extracted: str, identity: Identity) -> float:
        from easydict import EasyDict

        name = check_task(identity.get("task"))
        entry = EasyDict({"answer": identity["answer"], "metadata": identity.get("metadata") or {}})
        extra = EXTRA_CHECKS.get(name)
        try:
            if extra is not None and not extra(extracted, identity):
                return 0.0
            raw = library().get_score_answer_fn(name)(extracted, entry)
            score = float(raw)
        except Exception:  # noqa: BLE001 - a scorer that fails on a hostile answer gives no reward
            return 0.0
        if isinstance(raw, str) or not 0.0 <= score <= 1.0:
            return 0.0
        return score if self.params.get("partial") else float(score >= 1.0)


def bootcamp_dict(
    task: str,
    seed: int = 1234,
    test: int = 50,
    train: int = 500,
    *,
    prefix: str = PREFIX,
    listed: Collection[str] | None = None,
) -> dict[str, Any]:
    """The config of `prefix + task`; `task` one of `listed` (default: the roster's, `names()`)."""
    check_task(task, names() if listed is None else listed)
    return {
        "name": f"{prefix}{task}",
        "seed": seed,
        "levels": [{"name": "default", "generator": "reasoning_core", "params": {"task": task}}],
        "splits": {"test": test, "train": train},
        "reward": {"name": "reasoning_core"},
        "limits": {"max_assistant_turns": 1, "max_tool_calls": 0},
        "sampling": {"temperature": 0.0, "max_tokens": 2048},
    }
