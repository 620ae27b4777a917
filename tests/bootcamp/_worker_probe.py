"""Functions the hash-seeded worker runs in adapters/test_worker.py (imported there, in its child)."""

from __future__ import annotations

import random
from datetime import date, datetime

_calls: list[int] = []  # grows in the worker itself, never in a fork (which ends with its case)


def state(tag: str) -> dict[str, object]:
    """What a generator might read besides its seed: the hash order of a set, a module-level cache
    warmed by earlier calls, an unseeded `random.Random()`, the global RNG, and what takes its seed
    from the OS unless the fork stops it: numpy's `default_rng()`, `random.seed()` and
    `numpy.random.seed()` with no seed (gramforge's `generate` calls the first), and the date."""
    import numpy as np

    _calls.append(1)
    out: dict[str, object] = {
        "set_order": list({f"{tag}{i}" for i in range(8)}),
        "earlier_calls": len(_calls),
        "unseeded": random.Random().random(),
        "global": random.random(),
        "numpy_unseeded": float(np.random.default_rng().random()),
        "today": date.today().isoformat(),
    }
    random.seed()
    np.random.seed()
    return out | {"reseeded": random.random(), "numpy_reseeded": float(np.random.random())}


def shout() -> str:
    print("a library that prints")  # must not reach the worker's replies
    return "ok"


def travel(when: str) -> str:
    """Move this process's clock (the worker's own, when called without a seed) to WHEN: the day a
    case is made again on."""
    import time_machine

    time_machine.travel(datetime.fromisoformat(when), tick=True).start()
    return date.today().isoformat()


def faker_date(seed: int) -> str:
    """Faker's `date_between("-1y", "today")` from a seeded Faker RNG, as reasoning-core's table_qa
    draws its dates: the seed alone does not fix it, the day does too."""
    import faker
    import faker.generator

    faker.generator.random.seed(seed)
    return faker.Faker().date_between("-1y", "today").isoformat()
