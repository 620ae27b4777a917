"""Sibling sets: items of a test set's own distribution that the agent could not have seen, held by
the harness only (built here, in the check's process, never written anywhere an agent can read).

Each task names its source, or the precise reason it has none (the check is then `unchecked`).
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from typing import Any

from ptbench.integrity.report import Unchecked

MAX_ITEMS = 400  # per set: enough for a p-value far below the threshold, cheap enough for CPU


@dataclass(frozen=True)
class Item:
    id: str
    prompt: str
    continuation: str  # the reference answer whose likelihood is measured


@dataclass
class SiblingSets:
    test: list[Item]
    siblings: list[Item]
    test_name: str
    siblings_name: str
    source: str  # how the siblings were made, in words
    details: dict[str, Any] = field(default_factory=dict)


# Benchmarks without a sibling source on this machine, and exactly why (never `clean` for them).
NO_SIBLINGS = {
    "gsm8k": "GSM8K's sibling source is perturbed re-instances of its test problems (GSM-Symbolic-style "
    "templates with new numbers); no such set is pinned by the task or available offline here",
    "aime2025": "AIME 2025's sibling source is earlier AIME exams (2024 and before); the task pins only the "
    "2025 problems and no earlier exam is available offline here",
    "gpqa": "GPQA's sibling source is the extended set minus the diamond/main questions; the task loads only "
    "its own subset of the gated dataset, so the extended questions are not available here",
    "bfcl": "BFCL's sibling source is the executable categories the task does not evaluate; the task pins only "
    "its own categories, so no other category is available here",
    "arena_hard_writing": "open-ended writing prompts judged against a reference model: no single reference "
    "answer whose likelihood measures memorization, so no sibling comparison is defined",
    "healthbench_easy": "open-ended conversations graded by rubric: no single reference answer whose "
    "likelihood measures memorization, so no sibling comparison is defined",
    "bootcamp": "a bootcamp environment's sibling source (fresh cases from its own generators, drawn with a "
    "secret seed) is not built yet, and a multi-turn game has no single reference answer to measure",
}


def sibling_sets(task_name: str, task: Any, seed: int, secret: int | None = None) -> SiblingSets:
    """The test items and their siblings for one trial's task; Unchecked where there is none.
    `secret`: the campaign's sibling secret (base_cache.sibling_seed), so every trial of a campaign
    draws the same siblings; None draws afresh."""
    rng = random.Random(secret) if secret is not None else _secret_rng()
    if task_name == "arithmetic":
        return _arithmetic(task, seed, rng)
    if task_name == "humaneval":
        return _humaneval(task, rng)
    raise Unchecked(NO_SIBLINGS.get(task_name, f"no sibling source is defined for task '{task_name}'"))


def _secret_rng() -> random.Random:
    """Which siblings (and which test items, where capped) are drawn: a fresh secret per run, so
    nothing in the source or the trial tells an agent which items will be compared."""
    return random.Random(int.from_bytes(os.urandom(8), "little"))


def _arithmetic(task: Any, seed: int, rng: random.Random) -> SiblingSets:
    """Fresh items from the task's own generator: its reserve, drawn with a secret stream, checked
    disjoint from the test split and from the training split the agent was given."""
    test = [Item(str(e.id), str(e.prompt), str(e.reference)) for e in task.test_examples()]
    pool = [Item(str(e.id), str(e.prompt), str(e.reference)) for e in task.reserve_examples()]
    train = {row["prompt"] for row in task.train_examples(seed) or []}
    test_prompts = {i.prompt for i in test}
    clash = [i.id for i in pool if i.prompt in test_prompts or i.prompt in train]
    if clash:
        raise Unchecked(f"sibling pool overlaps the test or training split ({len(clash)} items, e.g. {clash[0]})")
    n = min(len(test), len(pool), MAX_ITEMS)
    siblings = rng.sample(pool, n)
    test = rng.sample(test, min(len(test), MAX_ITEMS))
    return SiblingSets(
        test=test,
        siblings=siblings,
        test_name=f"arithmetic test split ({task.digits} digits)",
        siblings_name=f"arithmetic reserve ({task.digits} digits)",
        source="fresh items from the task's generator in neither the test nor the training split, drawn with a "
        "secret stream (per campaign where the base-score cache is used, else per run; checked disjoint from both)",
        details={"sibling_pool": len(pool), "training_items_checked": len(train)},
    )


def _humaneval(task: Any, rng: random.Random) -> SiblingSets:
    """Each problem's canonical solution (the test item's reference) against the same solution with
    its local names renamed (ptbench.integrity.memorization.rewrite): same semantics, same layout,
    text no model trained on HumanEval has seen. Problems with nothing safe to rename are left out."""
    from ptbench.integrity.memorization.rewrite import rename_locals
    from ptbench.tasks.humaneval import load_problems

    problems, _ = load_problems(task.data_path)
    test, siblings = [], []
    for p in problems:
        rewritten = rename_locals(p["prompt"], p["canonical_solution"], rng)
        if rewritten is None:
            continue
        test.append(Item(p["task_id"], p["prompt"], p["canonical_solution"]))
        siblings.append(Item(p["task_id"] + " (renamed)", p["prompt"], rewritten[0]))
    return SiblingSets(
        test=test[:MAX_ITEMS],
        siblings=siblings[:MAX_ITEMS],
        test_name="HumanEval canonical solutions",
        siblings_name="HumanEval canonical solutions with renamed locals",
        source="semantics-preserving rewrites of the canonical solutions (local names renamed with a secret "
        "choice, per campaign where the base-score cache is used, else per run; statements are not "
        "reordered); the prompt is the function's signature and docstring",
        details={"problems": len(problems), "problems_rewritten": len(test)},
    )
