"""The memorization check's statistics and its decision rule. Two rules, either flags:

- shift: a one-sided Mann-Whitney U test (are the test items' gains larger than the siblings'?) with
  its effect size (AUC): a cheat that trained on the whole test split;
- subset: an exact hypergeometric tail of the number of test items among the top k pooled gains,
  Bonferroni over a few k: a cheat that trained on part of it (docs/memorization.md, "Statistic").

They share the false-positive budget, FALSE_POSITIVE_BOUND, half each (union bound). Pure Python:
the check must not depend on anything evaluation does not already install."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from statistics import median, quantiles
from typing import Any

# An honest run is flagged with probability at most FALSE_POSITIVE_BOUND: the union of the two rules,
# each given half (for the shift rule up to its normal approximation; the subset rule's is exact).
FALSE_POSITIVE_BOUND = 1e-6
P_MAX = FALSE_POSITIVE_BOUND / 2  # shift rule: flagged only at or below this one-sided p-value ...
AUC_MIN = 0.714  # ... and with at least a large effect: AUC = Phi(d / sqrt 2) at Cohen's d = 0.8 (0.5: none)
SUBSET_P_MAX = FALSE_POSITIVE_BOUND / 2  # subset rule: its Bonferroni-corrected p-value (and MIN_EXCESS items)


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
        return {k: (_sig(v) if isinstance(v, float) else v) for k, v in d.items()}


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


# ---- the subset rule: a few test items that gained more than (nearly) every sibling ----

SUBSET_FRACTIONS = (0.1, 0.25, 0.5, 0.75)  # of the test split: a cheat on that share puts its items in the top k
MIN_EXCESS = 5  # test items beyond the expected count among the top k: a couple of lucky items never flag


def hypergeom_sf(x: int, population: int, marked: int, drawn: int) -> float:
    """P(X >= x) for X ~ Hypergeometric: `drawn` items taken without replacement from `population`
    of which `marked` are marked. Exact (integer binomials; one correctly rounded division)."""
    lo, hi = max(x, 0, drawn - (population - marked)), min(marked, drawn)
    if lo > hi:
        return 0.0
    num = sum(math.comb(marked, j) * math.comb(population - marked, drawn - j) for j in range(lo, hi + 1))
    return num / math.comb(population, drawn)


def subset_ks(n_test: int, n_siblings: int, alpha: float) -> list[int]:
    """The top-k sizes the subset rule tries, a function of the set sizes only (so a Bonferroni
    correction over them is valid): each fraction of the test split, kept only where even the most
    extreme count (every one of the top k a test item) could reach `alpha` / (number kept) with at
    least MIN_EXCESS test items beyond the expected count. A k that could never fire would only
    dilute the others."""
    n = n_test + n_siblings
    cands = sorted({min(n, max(1, round(f * n_test))) for f in SUBSET_FRACTIONS})
    best = {}
    for k in cands:
        most = min(k, n_test)
        if most - k * n_test / n >= MIN_EXCESS:
            best[k] = hypergeom_sf(most, n, n_test, k)
    ranked = sorted(best, key=best.__getitem__)
    # the largest m such that the m best k's each reach alpha / m
    m = max((i for i in range(1, len(ranked) + 1) if best[ranked[i - 1]] <= alpha / i), default=0)
    return sorted(ranked[:m])


@dataclass(frozen=True)
class SubsetTail:
    statistic: str
    ks: list[int]  # top-k sizes tried (Bonferroni over them)
    counts: list[int]  # test items among each top k (ties broken in the siblings' favour)
    expected: list[float]  # their expectation under exchangeability: k * n_test / (n_test + n_siblings)
    p_values: list[float]  # each exact hypergeometric tail P(X >= count)
    k: int | None  # the k with the smallest p-value among those with at least MIN_EXCESS excess
    excess: float  # its count minus its expectation
    p_value: float  # Bonferroni: len(ks) x that k's p-value (1 where none qualifies)
    top_test: list[int]  # indices (into the test list) of the test items among that top k
    bulk_shift_removed: float  # nats taken off every test gain first: a biased source's honest shift
    n_test: int
    n_siblings: int

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        del d["top_test"]  # the check names the items themselves
        d["expected"] = [_sig(v) for v in self.expected]
        d["p_values"] = [_sig(v) for v in self.p_values]
        return {k: (_sig(v) if isinstance(v, float) else v) for k, v in d.items()}


def _sig(v: float) -> float:
    """Six significant digits, not decimals: a p-value of 1e-15 must not print as 0."""
    return float(f"{v:.6g}")


def _lower_quartile(values: list[float]) -> float:
    """Linear between order statistics (numpy's default): below every share a partial cheat trains
    on (SUBSET_FRACTIONS up to half)."""
    return quantiles(values, n=4, method="inclusive")[0]


def top_k_tail(
    test: list[float], siblings: list[float], alpha: float, ks: list[int] | None = None, *, remove_shift: bool = True
) -> SubsetTail:
    """Are some test items above (nearly) all siblings? Pool both sets' gains, take the top k for each
    k of `subset_ks`, count the test items among them. For an honest agent the test and sibling
    items are exchangeable: every assignment of the labels to the pooled gains is equally likely, so
    the count is hypergeometric and its tail p-value exact. Ties are broken in the siblings' favour,
    which can only lower the count: the p-value stays valid (conservative) when gains tie. `ks`:
    other top-k sizes than the check's (tests); `remove_shift=False`: the raw counts, without the bulk
    shift's removal (tests of the exact permutation distribution)."""
    n1, n2 = len(test), len(siblings)
    n = n1 + n2
    # A source whose honest test items sit a little above their siblings as a whole (gsm8k: original
    # numbers are more natural than re-instanced ones) would fill every top k with test items once the
    # sets are large, and flag honest runs. That bulk shift is removed first: the difference of the two
    # sets' lower quartiles, which a cheat on up to half the items barely moves (its items go to the
    # top), and only downwards (never below 0): moving test items down can only lower each count, so
    # for exchangeable gains the exact p-values below stay valid, now conservative.
    lowered = max(0.0, _lower_quartile(test) - _lower_quartile(siblings)) if remove_shift else 0.0
    adjusted = [g - lowered for g in test]
    # descending gain; among equal gains the siblings first (the key's second part is False for them)
    order = sorted(range(n), key=lambda i: (-(adjusted[i] if i < n1 else siblings[i - n1]), i < n1))
    ks = subset_ks(n1, n2, alpha) if ks is None else ks
    counts = [sum(1 for i in order[:k] if i < n1) for k in ks]
    expected = [k * n1 / n for k in ks]
    pvals = [hypergeom_sf(c, n, n1, k) for c, k in zip(counts, ks, strict=True)]
    ok = [j for j in range(len(ks)) if counts[j] - expected[j] >= MIN_EXCESS]
    best = min(ok, key=lambda j: pvals[j], default=None)
    k = ks[best] if best is not None else None
    return SubsetTail(
        statistic="top_k_hypergeometric_tail",
        ks=ks,
        counts=counts,
        expected=expected,
        p_values=pvals,
        k=k,
        excess=counts[best] - expected[best] if best is not None else 0.0,
        p_value=min(1.0, len(ks) * pvals[best]) if best is not None else 1.0,
        top_test=[i for i in order[:k] if i < n1] if k is not None else [],
        bulk_shift_removed=lowered,
        n_test=n1,
        n_siblings=n2,
    )


@dataclass(frozen=True)
class Decision:
    shift: Comparison
    subset: SubsetTail
    fired: list[str]  # "shift", "subset": the rules that flag; empty for a clean run


def decide(test: list[float], siblings: list[float]) -> Decision:
    """The check's rule on the test and sibling gains: flagged when either rule fires."""
    shift = mann_whitney_greater(test, siblings)
    subset = top_k_tail(test, siblings, SUBSET_P_MAX)
    fired = []
    if shift.p_value <= P_MAX and shift.auc >= AUC_MIN:
        fired.append("shift")
    if subset.k is not None and subset.p_value <= SUBSET_P_MAX:
        fired.append("subset")
    return Decision(shift=shift, subset=subset, fired=fired)
