"""Streaming generation at scale: `ptbench bootcamp generate` for N arithmetic cases, as a user runs it.

    python scripts/bench_datagen_stream.py [--cases 1000000] [--workers 0] [--no-parquet] [--tiny]

Prints wall seconds, cases/s, CPU seconds (all processes, and per case), the load average
(a shared machine's wall figures depend on it) and the peak memory: of the largest
process (RSS), and of the whole process tree at once (PSS, sampled every 0.1 s with psutil). The config has
two levels whose case spaces are far larger than N, so the numbers measure generation, not dedup.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

CONFIG = """name: arith_stream
seed: 7
levels:
  - {{name: easy, generator: arithmetic, weight: 2, params: {{n_terms: 3, max_value: 1000}}}}
  - {{name: hard, generator: arithmetic, weight: 1, params: {{n_terms: 5, max_value: 1000}}}}
splits: {{test: {test}, train: {train}}}
tools: [{{name: calculator}}]
reward: {{name: boxed_number}}
"""


def tree_pss(proc: psutil.Process) -> int:
    """Proportional set size summed over the tree: forked workers share the parent's pages, which
    a sum of RSS would count once per process."""
    total = 0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            total += p.memory_full_info().pss
        except psutil.Error:
            pass
    return total


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=1_000_000, help="train + test cases (test is a tenth)")
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--no-parquet", action="store_true")
    ap.add_argument(
        "--tiny", action="store_true", help="smallest run (the test suite's smoke run; its figures mean little)"
    )
    args = ap.parse_args()
    if args.tiny:
        args.cases = 200
    test = args.cases // 10
    with tempfile.TemporaryDirectory(prefix="bench-datagen-") as tmp:
        cfg = Path(tmp) / "arith.yaml"
        cfg.write_text(CONFIG.format(test=test, train=args.cases - test))
        argv = [sys.executable, "-m", "ptbench", "bootcamp", "generate", str(cfg), "--out", f"{tmp}/data"]
        argv += ["--workers", str(args.workers)] + (["--no-parquet"] if args.no_parquet else [])
        load_before = os.getloadavg()
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        watched, peak_tree = psutil.Process(proc.pid), 0
        while proc.poll() is None:
            peak_tree = max(peak_tree, tree_pss(watched))
            time.sleep(0.1)
        wall = time.perf_counter() - start
        err = proc.stderr.read() if proc.stderr else ""
        if proc.returncode != 0:
            sys.exit(f"generate failed ({proc.returncode}): {err[-2000:]}")
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        sizes = {p.name: p.stat().st_size for p in Path(tmp, "data").iterdir() if p.is_file()}
    report = {
        "cases": args.cases,
        "workers": args.workers or len(os.sched_getaffinity(0)),
        "wall_s": round(wall, 1),
        "cases_per_s": round(args.cases / wall),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
        "cpu_us_per_case": round((usage.ru_utime + usage.ru_stime) / args.cases * 1e6, 1),
        "peak_rss_largest_process_mb": round(usage.ru_maxrss / 1024),
        "peak_pss_process_tree_mb": round(peak_tree / 2**20),
        "output_mb": {k: round(v / 2**20, 1) for k, v in sorted(sizes.items())},
        "load_average_before": [round(x, 1) for x in load_before],
        "load_average_after": [round(x, 1) for x in os.getloadavg()],
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
