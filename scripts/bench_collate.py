"""Benchmark: `ptbench collate` on 10,000 generated result records (target: under 2 s, plots included).

Run: python scripts/bench_collate.py [N] [--runs K] [--data DIR]
  N       result records (default 10,000)
  --runs  runs of each end-to-end command; the median is printed (default 3)
  --data  keep the generated records in DIR and reuse them on the next run (default: a fresh temp dir)

Prints the load average, the in-process phases (load and validate, comparability check, policy and
aggregate, cost table, tables, plots) and the whole `ptbench collate` command as a user runs it, as a
subprocess (python start-up and imports included), with `--no-plots` and with the default 8 plot files:
wall and CPU (user + system of the command and its plot processes) of each run, their medians and
the best run (the least disturbed by other load). CPU time is the steadier figure on a machine that
others load; it counts the two plot processes too, which run beside the command on a second core, so
with plots it exceeds the wall time a user waits on an idle 2-core machine.

The records: 10 agents x 4 base models x 7 benchmarks x seeds, about 1 in 8 without a score (no
model, agent failure, ...), 1 in 20 flagged, plus base zero-shot and instruct baselines beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TASKS = ["gsm8k", "aime2025", "gpqa", "humaneval", "bfcl", "arena_hard_writing", "healthbench_easy"]
FAILED = ["no_model", "agent_failed", "eval_failed", "cancelled", "setup_failed"]


def _record(campaign, agent, base, task, seed, rng, agent_name=None):
    status = rng.choice(FAILED) if rng.random() < 0.125 else rng.choice(["completed", "completed", "timed_out"])
    scored = status in ("completed", "timed_out")
    return {
        "campaign": campaign,
        "trial_id": f"{agent}__{base}__{task}__s{seed}",
        "agent": {"name": agent_name or agent, "label": agent},
        "base_model": {"id": f"org/{base}", "label": base},
        "task": {"name": task, "label": task},
        "seed": seed,
        "status": status,
        "failure": None if scored else {"stage": "solve", "kind": status},
        "budget": {"hours": 10, "gpus": 1, "solve_seconds_used": rng.uniform(600, 36000), "solve_runs": 1},
        "primary_metric": {"name": "accuracy", "value": rng.random(), "n": 100} if scored else None,
        "integrity": {"contamination": "flagged" if rng.random() < 0.05 else "clean", "model_identity": "clean"},
        "evaluation": {"limit": None, "generation": {"max_new_tokens": 4000}} if scored else {},
        "usage": {
            "input_tokens": rng.randint(10**5, 10**7),
            "output_tokens": rng.randint(10**4, 10**6),
            "cost_usd": rng.uniform(1, 50),
            "tool_calls": rng.randint(10, 500),
            "runs": rng.randint(1, 3),
        },
        "provenance": {"ptbench_version": "0", "host": "h", "scheduler": "slurm"},
        "finished_at": 0,
    }


def generate(results: Path, n: int, seed: int = 0) -> Path:
    """results/bench/<trial>/result.json (n records) + results/baselines/...; returns the campaign folder."""
    rng = random.Random(seed)
    cdir = results / "bench"
    agents, bases = [f"agent{i}" for i in range(10)], [f"base{i}" for i in range(4)]
    per_seed = len(agents) * len(bases) * len(TASKS)
    written = 0
    for s in range(-(-n // per_seed)):
        for a in agents:
            for b in bases:
                for t in TASKS:
                    if written == n:
                        break
                    r = _record("bench", a, b, t, s, rng)
                    d = cdir / r["trial_id"]
                    d.mkdir(parents=True)
                    (d / "result.json").write_text(json.dumps(r))
                    written += 1
    (cdir / "campaign.json").write_text(
        json.dumps({"name": "bench", "spec": {"name": "bench", "scoring": {"policy": "base_fallback"}}})
    )
    for slug, label, models, lo in (
        ("base-zero-shot", "base (zero-shot)", bases, 0.0),
        ("instruct", "instruct", ["i0", "i1"], 0.6),
    ):
        for m in models:
            for t in TASKS:
                r = _record("baselines", label, m, t, 0, rng, agent_name=f"baseline-{slug}")
                r.update(
                    status="completed",
                    failure=None,
                    integrity={},
                    usage={},
                    evaluation={"limit": None},
                    primary_metric={"name": "accuracy", "value": lo + 0.3 * rng.random(), "n": 100},
                )
                d = results / "baselines" / slug / m / t
                d.mkdir(parents=True)
                (d / "result.json").write_text(json.dumps(r))
    (results / f".generated-{n}").write_text("")
    return cdir


def _timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def _command(args: list[str]) -> tuple[float, float]:
    """(wall, CPU) of one `ptbench collate` run as a subprocess."""
    t, cpu0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # an install has its .pyc files
    run = subprocess.run([sys.executable, "-m", "ptbench", "collate", *args], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    assert run.returncode == 0, run.stderr
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime


def _runs(label: str, args: list[str], k: int) -> None:
    _command(args)  # not counted: writes the .pyc files, reads the records into the page cache
    runs = [_command(args) for _ in range(k)]
    each = ", ".join(f"{w:.2f}/{c:.2f}" for w, c in runs)
    print(
        f"{label} median {statistics.median(w for w, _ in runs):.2f} s wall, "
        f"{statistics.median(c for _, c in runs):.2f} s CPU; best {min(w for w, _ in runs):.2f} s wall, "
        f"{min(c for _, c in runs):.2f} s CPU  (wall/CPU of each run: {each})"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("n", nargs="?", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--data", type=Path, default=None)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ptbench-bench-collate-"))
    results = (a.data or tmp) / "results"
    cdir = results / "bench" if (results / f".generated-{a.n}").is_file() else generate(results, a.n)

    from ptbench.results.aggregate import collate
    from ptbench.results.collate import collate_dirs, gc_paused, load, policies, write_outputs
    from ptbench.results.comparable import check_comparable
    from ptbench.results.cost import cost_table
    from ptbench.results.plots import write_plots

    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} (1, 5, 15 min) on {os.cpu_count()} CPUs")
    with gc_paused():  # as in the command (write_tables)
        loaded, w0, c0 = _timed(lambda: load([cdir, results / "baselines"]))
        _, w1, c1 = _timed(lambda: check_comparable(loaded.records))
        c, w2, c2 = _timed(lambda: collate(loaded.records, *policies(loaded, None)))
        _, w3, c3 = _timed(lambda: cost_table(loaded.records, loaded.trial_dirs))
        result, w4, c4 = _timed(lambda: collate_dirs([cdir]))
        _, w5, c5 = _timed(lambda: write_outputs(result, tmp / "t1", plots=False))
    _, w6, c6 = _timed(lambda: write_plots(result.collation, result.costs, tmp / "t1"))  # matplotlib's import included
    _, w7, c7 = _timed(lambda: write_plots(result.collation, result.costs, tmp / "t1"))
    print(
        f"{len(result.collation.trials)} trial records + {len(loaded.records) - len(result.collation.trials)} "
        f"baselines in {results}"
    )
    print(f"  load + validate:                          {w0:.2f} s wall, {c0:.2f} s CPU")
    print(f"  comparability check:                      {w1:.2f} s wall, {c1:.2f} s CPU")
    print(f"  policy + aggregate:                       {w2:.2f} s wall, {c2:.2f} s CPU")
    print(f"  cost table:                               {w3:.2f} s wall, {c3:.2f} s CPU")
    print(f"collate_dirs (all of the above):            {w4:.2f} s wall, {c4:.2f} s CPU")
    print(f"tables (md, csv, tex, json, cost):          {w5:.2f} s wall, {c5:.2f} s CPU")
    print(f"8 plot files, first (import matplotlib):    {w6:.2f} s wall, {c6:.2f} s CPU")
    print(f"8 plot files, again:                        {w7:.2f} s wall, {c7:.2f} s CPU")
    _runs("`ptbench collate --no-plots`, end to end:  ", [str(cdir), "--out", str(tmp / "t3"), "--no-plots"], a.runs)
    _runs("`ptbench collate`, end to end:             ", [str(cdir), "--out", str(tmp / "t4")], a.runs)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    shutil.rmtree(tmp)  # the outputs, and the records unless --data keeps them


if __name__ == "__main__":
    main()
