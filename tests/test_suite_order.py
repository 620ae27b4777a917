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


LOG = """\
============ CPU seconds per test (total 95.0 s over 3 tests) =============
    80.00s  tests/a/test_x.py::test_one@tests/a/test_x.py
    10.00s  tests/b/test_y.py::test_alone
     5.00s  tests/c/test_z.py::test_job@slurm
============================== slowest durations ===============================
60.00s setup    tests/a/test_x.py::test_one@tests/a/test_x.py
30.00s call     tests/a/test_x.py::test_one@tests/a/test_x.py
12.00s call     tests/b/test_y.py::test_alone
9.00s call     tests/c/test_z.py::test_job@slurm
0.50s teardown tests/c/test_z.py::test_job@slurm
3 passed, 2 warnings in 70.25s (0:01:10)
"""


def test_the_suite_profile_reads_units_and_writes_ci_seconds(tmp_path) -> None:
    """scripts/suite_profile.py, the source of CI_SECONDS: setup, call and teardown add up per test; a
    file's group is charged under the file's path, a Slurm test under its own id; pytest's wall clock
    comes from the summary line."""
    import subprocess
    import sys

    log = tmp_path / "suite.log"
    log.write_text(LOG)
    script = str(conftest.REPO / "scripts" / "suite_profile.py")
    out = subprocess.run([sys.executable, script, str(log)], capture_output=True, text=True, check=True).stdout
    assert "summed test time 112 s wall, 95 s CPU" in out and "pytest wall clock 70 s" in out
    assert "    90.0 s     80.0 s CPU  tests/a/test_x.py" in out  # the group: its fixture's setup and its call
    ci = subprocess.run(
        [sys.executable, script, str(log), "--ci-seconds", "--at-least", "10"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert ci.stdout.splitlines() == ['    "tests/a/test_x.py": 90,', '    "tests/b/test_y.py::test_alone": 12,']
    missing = subprocess.run([sys.executable, script, str(tmp_path / "none.log")], capture_output=True, text=True)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "none.log" in missing.stderr
