"""Sibling sets: items of a test set's own distribution that the agent could not have seen, held by
the harness only (built here, in the check's process, never written anywhere an agent can read).

Each task names its source (its class's `sibling_source`, "module:function"), or the precise reason it
has none (`no_sibling_reason`: the check is then `not_applicable`, a fact of the task the agent cannot
cause, and the trial keeps its score). Tasks may not import integrity (the layers), so a task names
its builder by a string rather than the check keeping a table by task name: the benchmark's facts stay
in its one module, and a plugin's builder lives in its own package.
"""

from __future__ import annotations

import importlib
import os
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ptbench.integrity.report import NotApplicable, Unchecked

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


MIN_ITEMS = 20  # per set; fewer cannot reach the check's p-value threshold with a believable effect


def source_of(task_name: str) -> str | None:
    """The task's sibling builder, `module:function(task, seed, rng) -> SiblingSets` (its class's
    `sibling_source`: the benchmark names it, the check imports it here, in its own process)."""
    from ptbench.tasks.base import task_class

    return task_class(task_name).sibling_source


def not_applicable_reason(task_name: str, options: dict[str, Any]) -> str | None:
    """Why the check has no method for this task as the campaign configures it, decided from the
    campaign alone (what `validate` can tell before anything runs); None where it applies as far as
    the campaign says. A test split that proves too small only once loaded is told by the run."""
    from ptbench.tasks.base import task_class

    cls = task_class(task_name)
    if cls.sibling_source is None:
        return cls.no_sibling_reason or f"no sibling source is defined for task '{task_name}'"
    n_test = cls.configured_test_size(options)
    if n_test is not None and n_test < MIN_ITEMS:
        return too_few(n_test, None)
    return None


def too_few(n_test: int, n_siblings: int | None) -> str:
    sizes = f"{n_test} test" + (f", {n_siblings} sibling" if n_siblings is not None else "")
    return (
        f"the campaign's test split is too small for the check to have power ({sizes} items; at least "
        f"{MIN_ITEMS} each): a property of the task's configuration, not of the trial"
    )


def sibling_sets(task_name: str, task: Any, seed: int, secret: int | None = None) -> SiblingSets:
    """The test items and their siblings for one trial's task; NotApplicable where there is no
    method (or too few items), Unchecked where the source should have worked and did not.
    `secret`: the campaign's sibling secret (base_cache.sibling_seed), so every trial of a campaign
    draws the same siblings; None draws afresh."""
    reason = not_applicable_reason(task_name, {})
    if reason is not None:
        raise NotApplicable(reason)
    rng = random.Random(secret) if secret is not None else _secret_rng()
    module, func = str(source_of(task_name)).split(":")
    source: Callable[[Any, int, random.Random], SiblingSets] = getattr(importlib.import_module(module), func)
    sets = source(task, seed, rng)
    if min(len(sets.test), len(sets.siblings)) < MIN_ITEMS:
        raise NotApplicable(too_few(len(sets.test), len(sets.siblings)))
    return sets


def _secret_rng() -> random.Random:
    """Which siblings (and which test items, where capped) are drawn: a fresh secret per run, so
    nothing in the source or the trial tells an agent which items will be compared."""
    return random.Random(int.from_bytes(os.urandom(8), "little"))


def _arithmetic(task: Any, seed: int, rng: random.Random) -> SiblingSets:
    """Fresh items from the task's own generator: its reserve, drawn with a secret stream, checked
    disjoint from the test split and from the training split the agent was given.

    Not secret, and said so (details["sibling_secrecy"], in the verdict's reason): the item universe
    (every pair of `digits`-digit numbers, 10**(2 * digits)) is enumerable, and the training split is
    every pair outside test and reserve, so the reserve is the complement of the training file minus
    the test split, which an agent computes from its own data. A secret pool larger than the test
    split needs pairs that are in no file the agent gets: the training split would have to shrink
    (the demo's training file and results would change), and items outside the universe (other digit
    counts, other layouts) are not the test's distribution. docs/memorization.md#sibling-secrecy."""
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
        details={
            "sibling_pool": len(pool),
            "training_items_checked": len(train),
            "sibling_secrecy": f"not secret: the {10 ** (2 * task.digits)} pairs of {task.digits}-digit numbers are "
            f"enumerable and the {len(pool)} reserve pairs are exactly those in neither the training file nor the "
            "test split, so an agent that trained on test and reserve alike moves both sets together (the run "
            "journal and contamination checks, not this one, see that)",
        },
    )


def _humaneval(task: Any, seed: int, rng: random.Random) -> SiblingSets:
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
