"""Functions the hash-seeded worker runs in adapters/test_worker.py (imported there, in its child)."""

from __future__ import annotations

import random

_calls: list[int] = []  # grows in the worker itself, never in a fork (which ends with its case)


def state(tag: str) -> dict[str, object]:
    """What a generator might read besides its seed: the hash order of a set, a module-level cache
    warmed by earlier calls, an unseeded `random.Random()`, the global RNG, and what takes its seed
    from the OS unless the fork stops it: numpy's `default_rng()`, `random.seed()` and
    `numpy.random.seed()` with no seed (gramforge's `generate` calls the first)."""
    import numpy as np

    _calls.append(1)
    out: dict[str, object] = {
        "set_order": list({f"{tag}{i}" for i in range(8)}),
        "earlier_calls": len(_calls),
        "unseeded": random.Random().random(),
        "global": random.random(),
        "numpy_unseeded": float(np.random.default_rng().random()),
    }
    random.seed()
    np.random.seed()
    return out | {"reseeded": random.random(), "numpy_reseeded": float(np.random.random())}


def shout() -> str:
    print("a library that prints")  # must not reach the worker's replies
    return "ok"
