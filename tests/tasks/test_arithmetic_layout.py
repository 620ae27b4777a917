"""The arithmetic task's `layout` option: the same pairs in the same splits, written plain (`7+45=` ->
`52`) or aligned (`07+45=` -> `250`, the demo's layout); an unknown layout is refused by validate."""

from __future__ import annotations

import pytest

from ptbench.core.errors import OptionProblem
from ptbench.tasks.arithmetic import Arithmetic
from ptbench.tasks.options import check_task_options


def _pair(example_id: str) -> tuple[int, int]:
    a, b = example_id.split("+")
    return int(a), int(b)


def test_aligned_layout_writes_the_same_items_padded_and_least_significant_digit_first():
    plain, aligned = Arithmetic(layout="plain"), Arithmetic(layout="aligned")
    for split in ("test_examples", "reserve_examples"):
        p_items, a_items = getattr(plain, split)(), getattr(aligned, split)()
        assert [e.id for e in p_items] == [e.id for e in a_items]  # same pairs, same order
        for p, a in zip(p_items, a_items, strict=True):
            x, y = _pair(a.id)
            assert p.prompt == f"{x}+{y}=" and p.reference == str(x + y)
            assert a.prompt == f"{x:02d}+{y:02d}=" and len(a.reference) == 3
            assert int(a.reference[::-1]) == x + y
    assert len(aligned.reserve_examples()) >= 20  # the memorization check's siblings
    train = aligned.train_examples(0)
    assert {r["prompt"] for r in train}.isdisjoint({e.prompt for e in aligned.test_examples()})
    first = train[0]
    x, y = (int(v) for v in first["prompt"].rstrip("=").split("+"))
    assert first["completion"] == str(x + y).zfill(3)[::-1] + "\n"


def test_aligned_scoring_takes_the_reversed_padded_sum_only():
    task = Arithmetic(layout="aligned")
    ex = next(e for e in task.test_examples() if sum(_pair(e.id)) < 100)  # a sum that needs its padding
    x, y = _pair(ex.id)
    assert task.score(ex, str(x + y).zfill(3)[::-1] + "\n") == 1.0
    assert task.score(ex, str(x + y)) == 0.0  # the plain answer is another layout's


def test_unknown_layout_is_refused():
    check_task_options("arithmetic", {"layout": "aligned"})
    with pytest.raises(OptionProblem, match="layout"):
        check_task_options("arithmetic", {"layout": "reversed"})
