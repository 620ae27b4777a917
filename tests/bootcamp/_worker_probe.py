"""Functions the hash-seeded worker runs in adapters/test_worker.py (imported there, in its child)."""

from __future__ import annotations

import random

_calls: list[int] = []  # grows in the worker itself, never in a fork (which ends with its case)


def state(tag: str) -> dict[str, object]:
    """What a generator might read besides its seed: the hash order of a set, a module-level cache
    warmed by earlier calls, an unseeded `random.Random()` and the global RNG."""
    _calls.append(1)
    return {
        "set_order": list({f"{tag}{i}" for i in range(8)}),
        "earlier_calls": len(_calls),
        "unseeded": random.Random().random(),
        "global": random.random(),
    }


def shout() -> str:
    print("a library that prints")  # must not reach the worker's replies
    return "ok"
