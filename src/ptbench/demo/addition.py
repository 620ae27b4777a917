"""The demo's addition problems, split once: the arithmetic task's test items and everything else.

One place for the split, so the task (its train and test splits) and the bootcamp environment that
trains on the same format (`bootcamp/envs/addition.py`, the `reference-grpo` agent's default) agree
on what the test items are, and the environment never draws one.
"""

from __future__ import annotations

import random
from functools import cache

SPLIT_SEED = 1234


@cache
def split_pairs(digits: int = 2, n_test: int = 200) -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]:
    """(train pairs, test pairs) of `digits`-digit addition: disjoint, fixed by SPLIT_SEED."""
    top = 10**digits
    pairs = [(a, b) for a in range(top) for b in range(top)]
    random.Random(SPLIT_SEED).shuffle(pairs)
    n_test = min(n_test, len(pairs) // 5)
    return tuple(pairs[n_test:]), tuple(pairs[:n_test])


def prompt_of(a: int, b: int) -> str:
    return f"{a}+{b}="
