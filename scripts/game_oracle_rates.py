"""The game adapters' oracle pass rates (docs/bootcamp.md): each family's oracle played through the
adapter's own turn loop on N seeds, with a time limit per family (a family that runs past it counts
what it finished and says so).

    PYTHONPATH=src python scripts/game_oracle_rates.py --seeds 10 [--only minigrid.BabyAI-GoTo-v0 ...]
"""

from __future__ import annotations

import argparse
import random
import signal
import time
import warnings
from collections.abc import Callable
from typing import Any


class _Late(Exception):
    pass


def _late(*_: Any) -> None:
    raise _Late


def rate(name: str, cases: Callable[[int], list[dict[str, Any]]], make: Any, seeds: int, limit_s: int) -> str:
    from ptbench.bootcamp.adapters.turns import oracle_wins

    start = time.perf_counter()
    signal.alarm(limit_s)
    won = played = 0
    late = ""
    try:
        for identity in cases(seeds):
            won += oracle_wins(make, identity)
            played += 1
    except _Late:
        late = f" (stopped after {limit_s} s)"
    finally:
        signal.alarm(0)
    per_case = (time.perf_counter() - start) / max(played, 1)
    return f"{name}\t{won}/{played}{late}\t{per_case:.3f} s a case"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--limit-s", type=int, default=60, help="per family")
    parser.add_argument("--only", nargs="*", help="environment names (default: every game family)")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")  # gymnasium's registry warnings
    signal.signal(signal.SIGALRM, _late)

    from ptbench.bootcamp.adapters import chess_positions, gymnasium_toytext, minigrid_text, pettingzoo_classic

    def seeded(game: str) -> Callable[[int], list[dict[str, Any]]]:
        return lambda n: [{"game": game, "seed": 100 + s} for s in range(n)]

    def endgames(n: int) -> list[dict[str, Any]]:
        gen = chess_positions.EndgameGenerator(game="endgame")
        return [gen.case(random.Random(1000 + s)) for s in range(n)]

    jobs: list[tuple[str, Callable[[int], list[dict[str, Any]]], Any]] = []
    for module in (gymnasium_toytext, pettingzoo_classic, minigrid_text):
        jobs += [(f"{module.PREFIX}{g}", seeded(g), module.make) for g in module.names()]
    jobs.append(("chess.endgame", endgames, chess_positions.make))
    for name, cases, make in jobs:
        if not args.only or name in args.only:
            print(rate(name, cases, make, args.seeds, args.limit_s), flush=True)


if __name__ == "__main__":
    main()
