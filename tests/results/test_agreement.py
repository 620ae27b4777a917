"""Judge agreement against hand-computed cases: Fleiss' textbook table, Cohen's textbook 2×2,
perfect agreement, agreement at chance, and the undefined case."""

from __future__ import annotations

import random

import pytest

from ptbench.results.agreement import agreement, cohen_kappa, fleiss_kappa, fleiss_kappa_counts, percent_agreement

# Fleiss (1971) as tabulated on Wikipedia "Fleiss' kappa": 10 items, 14 raters, 5 categories.
FLEISS_TABLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def test_fleiss_textbook_example():
    # P-bar = 0.378, P_e = 0.213 -> kappa = 0.210 (by hand and in the textbook)
    assert fleiss_kappa_counts(FLEISS_TABLE) == pytest.approx(0.2099, abs=1e-4)
    # the same table as verdict lists gives the same kappa and P-bar
    verdicts = [[c for c, k in enumerate(row) for _ in range(k)] for row in FLEISS_TABLE]
    assert fleiss_kappa(verdicts) == pytest.approx(0.2099, abs=1e-4)
    assert percent_agreement(verdicts) == pytest.approx(0.3780, abs=1e-4)


def test_cohen_textbook_example():
    # 50 items: both yes 20, A yes/B no 5, A no/B yes 10, both no 15 -> p_o 0.7, p_e 0.5, kappa 0.4
    rows = [("y", "y")] * 20 + [("y", "n")] * 5 + [("n", "y")] * 10 + [("n", "n")] * 15
    assert cohen_kappa(rows) == pytest.approx(0.4)
    rec = agreement(rows, 2)
    assert rec["kappa_kind"] == "cohen" and rec["kappa"] == pytest.approx(0.4)
    assert rec["percent_agreement"] == pytest.approx(0.7) and rec["items"] == 50


def test_perfect_agreement_is_one_and_one_category_is_undefined():
    rows = [["a", "a", "a"], ["b", "b", "b"], ["c", "c", "c"]]
    assert fleiss_kappa(rows) == pytest.approx(1.0)
    assert cohen_kappa([r[:2] for r in rows]) == pytest.approx(1.0)
    same = agreement([["x", "x", "x"]] * 5, 3)
    assert same["kappa"] is None and same["percent_agreement"] == 1.0


def test_agreement_at_chance_is_near_zero():
    rng = random.Random(7)
    rows = [[rng.choice("ABC") for _ in range(3)] for _ in range(20000)]
    assert abs(fleiss_kappa(rows)) < 0.02
    assert abs(cohen_kappa([r[:2] for r in rows])) < 0.02


def test_one_judge_always_disagreeing():
    # three judges; two agree on "met"/"unmet" alternately, the third always says the opposite.
    rows = [[v, v, not v] for v in (True, False, True, False)]
    # each item: 1 agreeing pair of 3 -> P-bar 1/3; shares 0.5/0.5 -> P_e 0.5; kappa (1/3-1/2)/(1/2) = -1/3
    rec = agreement(rows, 3)
    assert rec["percent_agreement"] == pytest.approx(1 / 3)
    assert rec["kappa"] == pytest.approx(-1 / 3) and rec["kappa_kind"] == "fleiss"
    with pytest.raises(ValueError):
        agreement(rows, 1)
