"""The demo's addition problems, split once: the arithmetic task's test items, a reserve as large
that no split holds (the memorization check's siblings: ptbench.integrity.memorization), and the
training side, everything else.

One place for the split, so the task (its train and test splits) and the bootcamp environment that
trains on the same format (`bootcamp/envs/addition.py`, the `reference-grpo` agent's default) agree
on what the test items are, and the environment never draws one.
"""

from __future__ import annotations

import random
from functools import cache

SPLIT_SEED = 1234


@cache
def _shuffled(digits: int, n_test: int) -> tuple[list[tuple[int, int]], int]:
    top = 10**digits
    pairs = [(a, b) for a in range(top) for b in range(top)]
    random.Random(SPLIT_SEED).shuffle(pairs)
    return pairs, min(n_test, len(pairs) // 5)


@cache
def split_pairs(digits: int = 2, n_test: int = 200) -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]:
    """(train pairs, test pairs) of `digits`-digit addition: disjoint, fixed by SPLIT_SEED; the
    reserve (`reserve_pairs`) is in neither."""
    pairs, n = _shuffled(digits, n_test)
    return tuple(pairs[2 * n :]), tuple(pairs[:n])


@cache
def reserve_pairs(digits: int = 2, n_test: int = 200) -> tuple[tuple[int, int], ...]:
    """As many pairs as the test split, in neither split: held by the harness only."""
    pairs, n = _shuffled(digits, n_test)
    return tuple(pairs[n : 2 * n])


LAYOUTS = ("plain", "aligned")


def prompt_of(a: int, b: int, layout: str = "plain", digits: int = 2) -> str:
    """`7+45=` (plain) or `07+45=` (aligned: both operands zero-padded to `digits`)."""
    return f"{a:0{digits}d}+{b:0{digits}d}=" if layout == "aligned" else f"{a}+{b}="


def answer_of(a: int, b: int, layout: str = "plain", digits: int = 2) -> str:
    """`52` (plain) or `250` (aligned: the sum zero-padded to `digits` + 1 digits, least significant
    digit first, so the k-th digit of the answer sits under the k-th digits of the operands, the
    order in which one adds by hand)."""
    return str(a + b).zfill(digits + 1)[::-1] if layout == "aligned" else str(a + b)
