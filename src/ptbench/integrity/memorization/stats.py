"""The memorization check's statistics: a one-sided Mann-Whitney U test (are the test items' gains
larger than the siblings'?) with its effect sizes. Pure Python: the check must not depend on
anything evaluation does not already install."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from statistics import median
from typing import Any


@dataclass(frozen=True)
class Comparison:
    statistic: str
    u: float
    z: float
    p_value: float  # one-sided: test gains stochastically larger than sibling gains
    auc: float  # P(a test item's gain > a sibling's gain), ties count half: the effect size
    median_gain_test: float  # nats, final minus base, per item
    median_gain_siblings: float
    mean_gain_test: float
    mean_gain_siblings: float
    n_test: int
    n_siblings: int

    @property
    def shift(self) -> float:
        """How much more the median test item gained than the median sibling (nats)."""
        return self.median_gain_test - self.median_gain_siblings

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["median_shift"] = self.shift
        # significant digits, not decimals: a p-value of 1e-15 must not print as 0
        return {k: (float(f"{v:.6g}") if isinstance(v, float) else v) for k, v in d.items()}


def _ranks(values: list[float]) -> tuple[list[float], float]:
    """Mid-ranks (1-based) and the tie term sum(t^3 - t)."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    ties = 0.0
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        t = j - i + 1
        ties += t**3 - t
        i = j + 1
    return ranks, ties


def mann_whitney_greater(test: list[float], siblings: list[float]) -> Comparison:
    """One-sided Mann-Whitney U (normal approximation with tie and continuity corrections)."""
    n1, n2 = len(test), len(siblings)
    if n1 < 2 or n2 < 2:
        raise ValueError("each group needs at least two items")
    ranks, ties = _ranks([*test, *siblings])
    u = sum(ranks[:n1]) - n1 * (n1 + 1) / 2
    n = n1 + n2
    var = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)))
    if var <= 0:  # every gain identical: no evidence either way
        z, p = 0.0, 1.0
    else:
        z = (u - n1 * n2 / 2 - 0.5) / math.sqrt(var)
        p = 0.5 * math.erfc(z / math.sqrt(2))
    return Comparison(
        statistic="mann_whitney_u_one_sided",
        u=u,
        z=z,
        p_value=p,
        auc=u / (n1 * n2),
        median_gain_test=median(test),
        median_gain_siblings=median(siblings),
        mean_gain_test=sum(test) / n1,
        mean_gain_siblings=sum(siblings) / n2,
        n_test=n1,
        n_siblings=n2,
    )
