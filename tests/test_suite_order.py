"""The order tests/conftest.py hands work to pytest-xdist's two workers: the longest unit first, a
unit's tests together and in their own order (the Slurm tests expect theirs)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from tests import conftest


@dataclass
class Item:
    """What _longest_first reads of a pytest item: its id and its marks."""

    nodeid: str
    marks: dict[str, pytest.Mark] = field(default_factory=dict)

    def get_closest_marker(self, name: str) -> pytest.Mark | None:
        return self.marks.get(name)


def _item(nodeid: str, *, group: str | None = None, slow: bool = False) -> Item:
    marks = {}
    if group:
        marks["xdist_group"] = pytest.mark.xdist_group(group).mark
    if slow:
        marks["slow"] = pytest.mark.slow.mark
    return Item(nodeid, marks)


def _order(items: list[Item], monkeypatch, ci_seconds: dict[str, float]) -> list[str]:
    monkeypatch.setattr(conftest, "CI_SECONDS", ci_seconds)
    conftest._longest_first(items)  # the stand-in has what it reads of a pytest item
    return [i.nodeid for i in items]


def test_the_longest_unit_goes_first_and_a_group_stays_together_in_order(monkeypatch) -> None:
    items = [
        _item("a.py::fast1"),
        _item("s1.py::one", group="slurm", slow=True),
        _item("b.py::slow1", slow=True),
        _item("a.py::fast2"),
        _item("s2.py::two", group="slurm", slow=True),
        _item("d.py::demo", slow=True),
        _item("s1.py::three", group="slurm"),
    ]
    order = _order(items, monkeypatch, {"d.py::demo": 420})
    # demo (420 s) before the slurm group (2 slow + 1 fast), before one slow test, before the fast ones;
    # equal costs keep collection order, the group keeps its own
    assert order == [
        "d.py::demo",
        "s1.py::one",
        "s2.py::two",
        "s1.py::three",
        "b.py::slow1",
        "a.py::fast1",
        "a.py::fast2",
    ]


def test_a_files_measured_seconds_count_once_for_its_unit(monkeypatch) -> None:
    paper = [_item(f"paper.py::t{i}", group="paper.py", slow=True) for i in range(17)]
    items = [_item("x.py::long", slow=True), *paper]
    # 17 slow tests would guess 17 * SLOW_SECONDS; the file's measured 100 s (fixture and tests) wins
    assert _order(items, monkeypatch, {"paper.py": 100, "x.py::long": 150})[0] == "x.py::long"
    assert _order(items, monkeypatch, {"paper.py": 200, "x.py::long": 150})[:17] == [i.nodeid for i in paper]
