"""Statistics for comparing agents: paired bootstrap intervals, sign-flip permutation p-values,
Student-t intervals for a mean, and the number of seeds a target interval width needs.

Pure functions over plain numbers (numpy for the resampling); `compare.py` decides what is paired.

Why these: a paper's claim "A beats B" rests on runs of A and B on identical (base model, task, seed)
cells. The seed is the unit that is exchangeable under "no difference", so the permutation test
flips the sign of whole seeds' differences, and the bootstrap resamples seeds (and, inside a cell
where per-item scores exist, the test items: the evaluation's own sampling noise).
"""

from __future__ import annotations

import itertools
import math
import statistics
from dataclasses import dataclass

BOOTSTRAP_REPS = 10_000
PERMUTATIONS = 20_000  # Monte Carlo sign flips when 2**n is larger than this
SEED = 20261201  # fixed: the same results give the same intervals, every time

# Two-sided 95 % quantiles of Student's t, df 1..30 (beyond: a Cornish-Fisher expansion, error < 1e-3)
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def t975(df: int) -> float:
    if df < 1:
        raise ValueError("a t interval needs at least two values (df >= 1)")
    if df <= len(_T975):
        return _T975[df - 1]
    z = 1.959964
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


@dataclass(frozen=True)
class Cell:
    """One paired cell (a base model on one seed): A − B, and the per-item differences when both
    trials have per-item scores on the same items (else None)."""

    diff: float
    items: tuple[float, ...] | None = None


@dataclass(frozen=True)
class Unit:
    """One seed: its cells, each with a weight (1/bases for a benchmark; w_task/bases for the
    weighted average); the seed's difference is the weighted sum of its cells."""

    cells: tuple[tuple[float, Cell], ...]

    @property
    def diff(self) -> float:
        return sum(w * c.diff for w, c in self.cells)


@dataclass(frozen=True)
class PairedResult:
    diff: float
    ci_low: float | None  # None: fewer than two seeds, no interval
    ci_high: float | None
    p_value: float | None
    n_pairs: int  # seeds paired
    n_cells: int
    items_resampled: bool
    std: float | None = None  # spread of the seeds' differences (None: one seed)


def paired_difference(units: list[Unit], *, reps: int = BOOTSTRAP_REPS, seed: int = SEED) -> PairedResult:
    """Mean over seeds of A − B; percentile-bootstrap 95 % CI over seeds (and over items within each
    cell that has them); two-sided sign-flip permutation p-value over seeds."""
    import numpy as np  # here, not at the top: `collate` without --compare never pays for the import

    if not units:
        raise ValueError("no paired seeds")
    diffs = np.array([u.diff for u in units])
    n_cells = sum(len(u.cells) for u in units)
    with_items = any(c.items for u in units for _, c in u.cells)
    if len(units) < 2:
        return PairedResult(float(diffs.mean()), None, None, None, len(units), n_cells, False)
    rng = np.random.default_rng(seed)
    # each unit's difference under resampled items, one column per bootstrap rep
    per_unit = np.empty((len(units), reps))
    for i, u in enumerate(units):
        col = np.full(reps, u.diff)
        for w, c in u.cells:
            if c.items:
                items = np.asarray(c.items)
                draws = rng.integers(0, len(items), size=(reps, len(items)))
                col += w * (items[draws].mean(axis=1) - items.mean())
        per_unit[i] = col
    picks = rng.integers(0, len(units), size=(reps, len(units)))
    boot = per_unit[picks, np.arange(reps)[:, None]].mean(axis=1)
    low, high = np.percentile(boot, [2.5, 97.5])
    return PairedResult(
        float(diffs.mean()),
        float(low),
        float(high),
        sign_flip_p(diffs.tolist(), seed=seed),
        len(units),
        n_cells,
        with_items,
        float(diffs.std(ddof=1)),
    )


def sign_flip_p(diffs: list[float], *, seed: int = SEED, permutations: int = PERMUTATIONS) -> float:
    """Two-sided p-value of mean(diffs) under random signs: exact when 2**n <= `permutations`."""
    import numpy as np

    d = np.asarray(diffs, dtype=float)
    observed = abs(d.mean()) - 1e-12 * max(1.0, abs(d).max())  # ties count as extreme
    if 2 ** len(d) <= permutations:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=len(d))))
        return float(np.mean(np.abs(signs @ d / len(d)) >= observed))
    signs = np.random.default_rng(seed).choice((1.0, -1.0), size=(permutations, len(d)))
    extreme = int(np.sum(np.abs(signs @ d / len(d)) >= observed))
    return (extreme + 1) / (permutations + 1)  # the observed assignment counts as one draw


def mean_ci(values: list[float]) -> tuple[float, float] | None:
    """Student-t 95 % interval of a mean over runs; None for fewer than two runs (or a nan)."""
    if len(values) < 2 or any(math.isnan(v) for v in values):
        return None
    m = statistics.fmean(values)
    half = t975(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return m - half, m + half


def seeds_needed(std: float, width: float, *, limit: int = 10_000) -> int | None:
    """Smallest n with a 95 % t-interval of full width <= `width` for a spread `std` over seeds;
    None when the spread is not known (nan) or more than `limit` would be needed."""
    if width <= 0:
        raise ValueError("the interval width must be positive")
    if math.isnan(std):
        return None
    for n in range(2, limit + 1):
        if 2 * t975(n - 1) * std / math.sqrt(n) <= width:
            return n
    return None
