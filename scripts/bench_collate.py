"""Benchmark: `ptbench collate` on 10,000 generated result records (target < 2 s).

Run: python scripts/bench_collate.py [N]   (prints the in-process collation time, the time of all the
tables and plots, and the whole `ptbench collate` command as a user runs it)

The records: 10 agents x 4 base models x 7 benchmarks x seeds, about 1 in 8 without a score (no
model, agent failure, ...), 1 in 20 flagged, plus base zero-shot and instruct baselines beside them.
"""

from __future__ import annotations

import json
import os
import random
import resource
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
        "campaign": campaign, "trial_id": f"{agent}__{base}__{task}__s{seed}", "agent": {"name": agent_name or agent, "label": agent},
        "base_model": {"id": f"org/{base}", "label": base}, "task": {"name": task, "label": task}, "seed": seed, "status": status,
        "failure": None if scored else {"stage": "solve", "kind": status},
        "budget": {"hours": 10, "gpus": 1, "solve_seconds_used": rng.uniform(600, 36000), "solve_runs": 1},
        "primary_metric": {"name": "accuracy", "value": rng.random(), "n": 100} if scored else None,
        "integrity": {"contamination": "flagged" if rng.random() < 0.05 else "clean", "model_identity": "clean"},
        "evaluation": {"limit": None, "generation": {"max_new_tokens": 4000}} if scored else {},
        "usage": {"input_tokens": rng.randint(10**5, 10**7), "output_tokens": rng.randint(10**4, 10**6), "cost_usd": rng.uniform(1, 50),
                  "tool_calls": rng.randint(10, 500), "runs": rng.randint(1, 3)},
        "provenance": {"ptbench_version": "0", "host": "h", "scheduler": "slurm"}, "finished_at": 0,
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
    (cdir / "campaign.json").write_text(json.dumps({"name": "bench", "spec": {"name": "bench", "scoring": {"policy": "base_fallback"}}}))
    for slug, label, models, lo in (("base-zero-shot", "base (zero-shot)", bases, 0.0), ("instruct", "instruct", ["i0", "i1"], 0.6)):
        for m in models:
            for t in TASKS:
                r = _record("baselines", label, m, t, 0, rng, agent_name=f"baseline-{slug}")
                r.update(status="completed", failure=None, integrity={}, usage={}, evaluation={"limit": None},
                         primary_metric={"name": "accuracy", "value": lo + 0.3 * rng.random(), "n": 100})
                d = results / "baselines" / slug / m / t
                d.mkdir(parents=True)
                (d / "result.json").write_text(json.dumps(r))
    return cdir


def _timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def _command(args):
    t, cpu0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    run = subprocess.run([sys.executable, "-m", "ptbench", "collate", *args], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return f"{time.perf_counter() - t:.2f} s wall, {cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime:.2f} s CPU"


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    tmp = Path(tempfile.mkdtemp(prefix="ptbench-bench-collate-"))
    cdir = generate(tmp / "results", n)
    from ptbench.results.collate import collate_dirs, write_outputs

    result, w1, c1 = _timed(lambda: collate_dirs([cdir]))
    _, w2, c2 = _timed(lambda: write_outputs(result, tmp / "t1", plots=False))
    _, w3, c3 = _timed(lambda: write_outputs(result, tmp / "t2", plots=True))
    cmd_tables = _command([str(cdir), "--out", str(tmp / "t3"), "--no-plots"])
    cmd_all = _command([str(cdir), "--out", str(tmp / "t4")])
    print(f"{len(result.collation.trials)} trial records + baselines in {cdir}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"load + validate + policy + aggregate:        {w1:.2f} s wall, {c1:.2f} s CPU")
    print(f"tables (md, csv, tex, json, cost):           {w2:.2f} s wall, {c2:.2f} s CPU")
    print(f"tables + 8 plot files (matplotlib):          {w3:.2f} s wall, {c3:.2f} s CPU")
    print(f"`ptbench collate --no-plots`, end to end:    {cmd_tables} (python start-up included)")
    print(f"`ptbench collate`, end to end:               {cmd_all}")


if __name__ == "__main__":
    main()
