"""The cost of a call, from the price table `prices.json` (data, not code)."""

from __future__ import annotations

import json
from functools import cache, lru_cache
from pathlib import Path

from ptbench.gateway.wire import Usage


@cache
def price_table(path: str | None = None) -> dict[str, dict[str, float]]:
    raw = json.loads(Path(path or Path(__file__).with_name("prices.json")).read_text())
    return {k: v for k, v in raw.items() if not k.startswith("_")}


@lru_cache(maxsize=256)
def _default_price(model: str) -> tuple[str, dict[str, float]]:
    return price_of(model, price_table())


def price_of(model: str, table: dict[str, dict[str, float]] | None = None) -> tuple[str, dict[str, float]]:
    """(the table entry used, its prices) for `model`; the '*' entry when none matches."""
    if table is None:
        return _default_price(model)
    name = model.rsplit("/", 1)[-1].lower()
    best = max((k for k in table if k != "*" and name.startswith(k)), key=len, default="*")
    return best, table[best]


def cost_usd(model: str, usage: Usage, table: dict[str, dict[str, float]] | None = None) -> float:
    _, p = price_of(model, table)
    return (
        usage.input * p["input"]
        + usage.output * p["output"]
        + usage.cache_read * p.get("cache_read", 0.0)
        + usage.cache_write * p.get("cache_write", 0.0)
    ) / 1e6
