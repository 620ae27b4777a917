"""reasoning-core's generated tasks (`rcg.<task>`): every one has a verdict (adopted, or left out with
a reason), the adopted ones are listed under their own source, one verifies at 2 cases, and a task
left out because its scorer credits a hedge stays out (its scorer really does credit it: the control)."""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from types import ModuleType

import pytest

from ptbench.core.errors import UserError

from ..conftest import require

# Left out: its scorer parses the first list out of the text, so "R or W" scores 1 (the screen, 4 of 4 cases).
HEDGED = "binary_weight_incidence_reordering"
# Adopted, verified at 100 cases (0.4 and 0.7 s a case there, on a loaded box).
SAMPLE = ("composed_lens_update", "clock_page_replacement")


def _adapter() -> ModuleType:
    require(importlib.util.find_spec("reasoning_core") is not None, "reasoning-core is not installed")
    from ptbench.bootcamp.adapters import reasoning_core_generated

    return reasoning_core_generated


def test_every_generated_task_is_adopted_or_left_out_with_a_reason() -> None:
    gen = _adapter()
    library = set(gen.library().list_tasks(scope="generated"))
    adopted, excluded = set(gen.names()), gen.excluded()
    assert adopted and adopted <= library and not adopted & set(excluded)
    assert adopted | set(excluded) == library  # a library bump with new tasks shows here
    assert set(gen.verified_cases()) == adopted and set(gen.verified_cases().values()) <= {20, 100}
    assert all(reason.strip() for reason in excluded.values())
    assert not adopted & set(gen.library().list_tasks())  # none of the roster's (those are rc.)


def test_adopted_tasks_are_listed_under_their_own_source() -> None:
    gen = _adapter()
    from ptbench.bootcamp.adapters import ADAPTERS

    assert ADAPTERS.get("rcg.") is gen
    config = gen.bootcamp_dict(SAMPLE[0])
    assert config["name"] == f"rcg.{SAMPLE[0]}" and config["levels"][0]["params"] == {"task": SAMPLE[0]}
    assert gen.describe(SAMPLE[0])["domain"].startswith("reasoning-core (generated): ")
    with pytest.raises(UserError):
        gen.bootcamp_dict(HEDGED)  # left out
    with pytest.raises(UserError):
        gen.bootcamp_dict("logic_qa")  # a roster task is rc.logic_qa, not rcg.


@pytest.mark.parametrize("task", SAMPLE)
def test_an_adopted_task_verifies(task: str) -> None:
    _adapter()
    from ptbench.bootcamp.environment import build_environment
    from ptbench.bootcamp.verify import verify_environment

    with contextlib.redirect_stdout(sys.stderr):
        r = verify_environment(f"rcg.{task}", "reasoning-core (generated)", 2,
                               lambda: build_environment(f"rcg.{task}"))  # fmt: skip
    assert r.status == "verified", (r.error, r.problems)
    assert r.oracle_pass == r.cases == 2 and r.hostile_pass == r.hostile_total > 0


def test_a_task_whose_scorer_credits_a_hedge_stays_out() -> None:
    gen = _adapter()
    from ptbench.bootcamp.adapters import _worker
    from ptbench.bootcamp.adapters import reasoning_core as rc

    assert HEDGED not in gen.names() and gen.excluded()[HEDGED].startswith(gen.REASONS["hedge"])
    with pytest.raises(UserError):
        rc.check_task(HEDGED)  # neither generator nor reward takes it
    # the control: the library's own scorer does give the hedge full credit
    a = _worker.call(f"{rc.__name__}:_case_in_worker", HEDGED, 1, seed=1)
    b = _worker.call(f"{rc.__name__}:_case_in_worker", HEDGED, 2, seed=2)
    assert a["answer"] != b["answer"]
    from easydict import EasyDict

    entry = EasyDict({"answer": a["answer"], "metadata": a["metadata"]})
    score = gen.library().get_score_answer_fn(HEDGED)
    assert score(a["answer"], entry) == 1 and score(b["answer"], entry) < 1
    assert score(f"{a['answer']} or {b['answer']}", entry) == 1
