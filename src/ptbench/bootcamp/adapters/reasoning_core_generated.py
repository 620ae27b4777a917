"""reasoning-core's auto-generated tasks that pass ptbench's verification, as `rcg.<task>`
(`pip install 'ptbench[bootcamp-reasoning-core]'`, the same library as `rc.`).

Besides its shipped roster (`rc.<task>`, adapters/reasoning_core.py), reasoning-core 0.5.0 carries
~800 "unpromoted" tasks that its own task-search pipeline wrote (`list_tasks(scope="generated")`:
`delaunay_flip_trace`, `wavelet_tree_queries`, `vcg_pivotal_payments`, ...). Each is a `Task` like
the roster's, with its own generator and `score_answer`, so each is made and scored exactly as a
roster task is: the same generator and reward (`reasoning_core`: the case made in the adapters'
hash-seeded worker, a fresh seeded fork per case; the library's prompt; `<answer>…</answer>` scored
by the task's own scorer, binary). Their source and prefix are their own (`reasoning-core
(generated)`, `rcg.`) because the library does not vouch for them as it does for its roster: each
one adopted here was screened and then verified by ptbench (`bootcamp verify rcg.X --cases 100`, or
20 where the run says so in docs/bootcamp.md), and the rest are left out with a reason.

Which tasks are adopted, and why each of the others is not, is data (hundreds of names):
`reasoning_core_generated.json` next to this module, `adopted` (name -> the number of cases
`bootcamp verify` passed it at) and `excluded` (name -> a reason code of `REASONS`, then the screen's
or verify's detail). A task the installed library no longer has is not listed.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from ptbench.bootcamp.adapters import reasoning_core as rc

EXTRA = rc.EXTRA
SOURCE = "reasoning-core (generated)"
DOMAIN = "reasoning-core's auto-generated task families (single turn, the library's scorer)"
PREFIX = "rcg."
DATA = Path(__file__).with_name("reasoning_core_generated.json")
# Why a generated task is left out (the per-task code and detail are in DATA's `excluded`).
REASONS = {
    "error": "generating or importing it raised in the hash-seeded worker (a bug of the task, or a package it "
    "needs that is not installed)",
    "slow": "a case took more than 3 s to generate (or its import more than 2 min), on the screen's loaded 2 cores",
    "nondeterministic": "two fresh processes (the tasks taken in opposite orders) made other bytes for the same seed",
    "oracle": "the library's own answer did not score 1 with its own scorer (or it is empty)",
    "hedge": "its scorer gave credit to a hedge ('R or W'), a candidate list ('W, R'), a claimed score or another "
    "case's answer",
    "duplicate": "the same family as one ptbench already installs (another source's, the roster's, or another "
    "generated draw of the same idea)",
    "verify": "screened clean on 4 cases but failed `bootcamp verify` at more cases",
    "unverified": "screened clean on 4 cases, but `bootcamp verify` did not reach it in the session that adopted "
    "the others (CPU time): left out until it verifies",
}


@cache
def _data() -> dict[str, Any]:
    return dict(json.loads(DATA.read_text()))


def library() -> ModuleType:
    return rc.library()


@cache
def names() -> list[str]:
    present = set(library().list_tasks(scope="generated"))
    return sorted(n for n in _data()["adopted"] if n in present)


def verified_cases() -> dict[str, int]:
    """Each adopted task's `bootcamp verify` run: how many cases it passed at (100, or 20)."""
    return {n: int(_data()["adopted"][n]) for n in names()}


def excluded() -> dict[str, str]:
    """Each generated task left out, with its reason (the code's sentence, then the detail)."""
    out = {}
    for name, (code, detail) in _data()["excluded"].items():
        out[name] = REASONS[code] + (f": {detail}" if detail else "")
    return out


@cache
def _groups() -> dict[str, str]:
    """The task-search batch a task came from (`k3_counterfactual_r1` -> `counterfactual`)."""
    from reasoning_core.registry import _task_to_module_map

    out = {}
    for name in names():
        batch = _task_to_module_map[name][0].split(".")[1]  # generated.<batch>.<task>.<module>
        parts = batch.split("_")
        out[name] = " ".join(parts[1:-1]) if len(parts) > 2 else batch
    return out


def describe(name: str) -> dict[str, str]:
    return {"domain": f"reasoning-core (generated): {_groups().get(name, 'misc')}", "tools": "-", "levels": "default"}


def bootcamp_dict(task: str, seed: int = 1234, test: int = 50, train: int = 500) -> dict[str, Any]:
    return rc.bootcamp_dict(task, seed=seed, test=test, train=train, prefix=PREFIX, listed=names())
