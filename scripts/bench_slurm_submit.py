#!/usr/bin/env python
"""Benchmark: submit a 1,000-trial campaign to Slurm, planning included (what `ptbench submit` does).

Needs the dev cluster (`eval "$(scripts/slurm-dev-cluster.sh start)"`). The jobs are submitted
held (`sbatch --hold`) and cancelled at the end, so the node never runs them.
Target: one `scontrol show config` (the limits) and one sbatch per array the limits need (one
array up to MaxArraySize, 1001 by default), under 3 s. `--trials 1200` shows the split.

    python scripts/bench_slurm_submit.py [--trials 1000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml


def write_campaign(folder: Path, trials: int, name: str = "bench-submit") -> Path:
    """A realistic matrix: 10 agent settings x 2 base models x 5 tasks x (trials / 100) seeds."""
    seeds = max(1, trials // 100)
    data = {
        "name": name,
        "agents": [{"name": "base-model", "label": f"agent{i}"} for i in range(10)],
        "base_models": [
            {"id": f"local/model{i}", "path": str(folder / f"model{i}"), "label": f"model{i}"} for i in range(2)
        ],
        "tasks": [
            {"name": "arithmetic", "label": f"arith{d}", "options": {"digits": 1 + d % 3, "n_test": 50 + d}}
            for d in range(1, 6)
        ],
        "seeds": list(range(seeds)),
        "budget": {"hours": 10, "gpus": 1, "gpu_type": "H100"},
        "backend": {
            "name": "slurm",
            "options": {"cpus_per_task": 1, "mem_gb": 1, "gres": "", "sbatch": {"hold": True}},
        },
        "results_dir": str(folder / "results"),
        "parallelism": 50,
    }
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


class SlurmCallLog:
    """Counts the Slurm commands this process runs: shims on PATH log each call, then run the real tool."""

    TOOLS = ("sbatch", "squeue", "sacct", "scancel", "scontrol")

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="ptbench-slurm-calls-"))
        self.log = self.dir / "calls.txt"
        for tool in self.TOOLS:
            real = shutil.which(tool)
            if real:
                shim = self.dir / tool
                shim.write_text(f'#!/bin/sh\necho "{tool} $*" >> "{self.log}"\nexec "{real}" "$@"\n')
                shim.chmod(0o755)
        os.environ["PATH"] = f"{self.dir}{os.pathsep}{os.environ['PATH']}"

    def take(self) -> list[list[str]]:
        """The calls since the last take."""
        lines = self.log.read_text().splitlines() if self.log.exists() else []
        self.log.unlink(missing_ok=True)
        return [line.split() for line in lines]


def submit(campaign: Path, calls: SlurmCallLog) -> tuple[float, list[list[str]], list[str], int]:
    """`ptbench submit CAMPAIGN`'s work in this process: plan, pick what to submit, submit."""
    from ptbench import commands
    from ptbench.backends import get_backend

    calls.take()
    t0 = time.perf_counter()
    p = commands.plan(str(campaign))
    backend = get_backend("slurm", p.campaign.backend.options)
    live = backend.scheduler_states(p.campaign_dir, p.unfinished) if (p.campaign_dir / "jobs.json").exists() else {}
    todo = commands.submittable(p, scheduler_states=live)
    done = backend.submit(p, todo)
    return time.perf_counter() - t0, calls.take(), done.job_ids, len(todo)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--keep", help="folder to keep the campaign in (default: a temp folder)")
    args = ap.parse_args()
    folder = Path(args.keep or tempfile.mkdtemp(prefix="ptbench-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    import submitit  # noqa: F401  (imported before timing, as below)

    import ptbench.backends.slurm.backend  # noqa: F401  (imports are not submission work; the CLI figure below includes them)
    import ptbench.commands  # noqa: F401  (likewise)

    seconds, calls, arrays, n = submit(write_campaign(folder, args.trials), SlurmCallLog())
    try:
        tasks = subprocess.run(
            ["squeue", "-h", "-r", "-t", "all", "-j", ",".join(arrays), "-o", "%i"], capture_output=True, text=True
        ).stdout.split()
    finally:
        subprocess.run(["scancel", *arrays], check=False)
    # the same through the real command line, Python start-up and imports included
    cli_campaign = write_campaign(folder, args.trials, name="bench-submit-cli")
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "ptbench", "submit", str(cli_campaign)], capture_output=True, text=True)
    cli_seconds = time.perf_counter() - t0
    cli_jobs = re.search(r" as jobs? ([\d, ]+);", out.stdout)
    if cli_jobs:
        subprocess.run(["scancel", *cli_jobs.group(1).split(", ")], check=False)
    report = {
        "trials": n,
        "seconds": round(seconds, 3),
        "scheduler_calls": len(calls),
        "calls": [c[0] for c in calls],
        "arrays": len(arrays),
        "array_tasks_in_squeue": len(tasks),
        "jobs": arrays,
        "cli_seconds": round(cli_seconds, 3),
        "cli_ok": out.returncode == 0,
    }
    print(json.dumps(report))
    want_calls = 1 + len(arrays)  # scontrol show config, then one sbatch per array
    ok = len(calls) == want_calls and len(tasks) == n and seconds < 3.0
    print(
        f"submit {n} trials: {seconds:.2f} s ({cli_seconds:.2f} s as `ptbench submit` with start-up), "
        f"{len(calls)} scheduler call(s) ({', '.join(c[0] for c in calls)}), {len(arrays)} array(s) of "
        f"{len(tasks)} tasks in all — "
        + (
            f"within target ({want_calls} calls, < 3 s)"
            if ok
            else f"MISSES the target ({want_calls} calls, all {n} tasks queued, < 3 s)"
        ),
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
