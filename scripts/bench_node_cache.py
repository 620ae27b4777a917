"""Costs of the node features: one monitor sample (process tree + trial folder walk) and
`ptbench cache verify` over a synthetic agent cache. Prints its figures.

    PYTHONPATH=src python scripts/bench_node_cache.py [--files 20000] [--children 20] [--tiny]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ptbench.caches.resources import EvalList, Resource
from ptbench.caches.verify import verify
from ptbench.node.monitor import Monitor


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--children", type=int, default=20)
    ap.add_argument(
        "--tiny", action="store_true", help="smallest run (the test suite's smoke run; its figures mean little)"
    )
    args = ap.parse_args()
    if args.tiny:
        args.files, args.children = 200, 2
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        trial = root / "trial"
        for i in range(args.files):
            d = trial / "workspace" / f"d{i % 100}"
            d.mkdir(parents=True, exist_ok=True)
            (d / f"f{i}").write_bytes(b"x" * (i % 4096))
        kids = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"]) for _ in range(args.children)]
        try:
            m = Monitor(trial, interval=3600)
            m._sample("solve", 0.0)
            t0 = time.perf_counter()
            for _ in range(5):
                m._sample("solve", 1.0)
            per_sample = (time.perf_counter() - t0) / 5
        finally:
            for k in kids:
                k.kill()
                k.wait()
        # verify: the agent cache = the trial files plus a hub layout; the eval cache one test file
        agent = root / "agent"
        (agent / "hub").mkdir(parents=True)
        (trial / "workspace").rename(agent / "files")
        ev = root / "eval" / "hub" / "datasets--org--bench" / "snapshots" / "c0"
        ev.mkdir(parents=True)
        (ev / "test.csv").write_bytes(b"y" * 1000)
        t0 = time.perf_counter()
        report = verify(agent, root / "eval", EvalList([Resource("dataset", "org/bench", None, ("*",), "test_set")]))
        verify_s = time.perf_counter() - t0
    print(
        json.dumps(
            {
                "monitor_sample_seconds": round(per_sample, 4),
                "trial_files": args.files,
                "tree_processes": args.children + 1,
                "verify_seconds": round(verify_s, 3),
                "verify_files_scanned": report.files_scanned,
                "verify_files_hashed": report.files_hashed,
                "verify_files_per_second": round(report.files_scanned / verify_s),
            }
        )
    )


if __name__ == "__main__":
    main()
