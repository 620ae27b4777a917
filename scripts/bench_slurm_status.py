#!/usr/bin/env python
"""Benchmark: `ptbench status` on a campaign of 1,000 Slurm jobs (scheduler calls and wall time).

Needs the dev cluster (`eval "$(scripts/slurm-dev-cluster.sh start)"`). Submits 1,000 held jobs
(not timed), then times the status command's work: one squeue for all jobs, the trial folders,
and the table (printed to a null console). Target: at most 2 scheduler calls, under 0.5 s.

    python scripts/bench_slurm_status.py [--trials 1000]
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
# E402 below: these imports need the sys.path entry made above
from bench_slurm_submit import SlurmCallLog, submit, write_campaign  # noqa: E402


def status(campaign_dir: Path, calls: SlurmCallLog) -> tuple[dict[str, float], list[list[str]], dict[str, int]]:
    from rich.console import Console

    from ptbench import commands
    from ptbench.backends import get_backend
    from ptbench.plan import load_plan

    calls.take()
    commands.console = Console(file=io.StringIO(), width=200)
    t0 = time.perf_counter()
    backend = get_backend("slurm")
    states = backend.scheduler_states(campaign_dir, load_plan(campaign_dir))
    t1 = time.perf_counter()
    rows = commands.status_rows(campaign_dir, states, backend)
    t2 = time.perf_counter()
    commands.print_status(campaign_dir, rows)
    t3 = time.perf_counter()
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.state] = counts.get(r.state, 0) + 1
    times = {"scheduler": t1 - t0, "trial_folders": t2 - t1, "table": t3 - t2, "total": t3 - t0}
    return {k: round(v, 3) for k, v in times.items()}, calls.take(), counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=1000)
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="ptbench-bench-"))
    campaign = write_campaign(folder, args.trials, name="bench-status")
    log = SlurmCallLog()
    _, _, arrays, n = submit(campaign, log)
    try:
        times, calls, counts = status(folder / "results" / "bench-status", log)
    finally:
        subprocess.run(["scancel", *arrays], check=False)
    print(
        json.dumps(
            {
                "trials": n,
                "seconds": times,
                "scheduler_calls": len(calls),
                "calls": [c[0] for c in calls],
                "states": counts,
            }
        )
    )
    ok = len(calls) <= 2 and times["total"] < 0.5
    print(
        f"status on {n} jobs: {times['total']:.3f} s ({times['scheduler']:.3f} s in Slurm), {len(calls)} scheduler "
        "call(s) — " + ("within target (<= 2 calls, < 0.5 s)" if ok else "MISSES the target (<= 2 calls, < 0.5 s)"),
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
