#!/usr/bin/env python
"""Benchmark: submit a 1,000-trial campaign to Slurm, planning included (what `ptbench submit` does).

Needs the dev cluster (`eval "$(scripts/slurm-dev-cluster.sh start)"`). The jobs are submitted
held (`sbatch --hold`) and cancelled at the end, so the node never runs them.
Target: one array (one sbatch call), under 3 s.

    python scripts/bench_slurm_submit.py [--trials 1000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
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
        "tasks": [{"name": "arithmetic", "label": f"arith{d}", "options": {"digits": d}} for d in range(1, 6)],
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


def submit(campaign: Path, calls: SlurmCallLog) -> tuple[float, list[list[str]], str, int]:
    """`ptbench submit CAMPAIGN`'s work in this process: plan, pick what to submit, submit."""
    from ptbench import commands
    from ptbench.backends import get_backend

    calls.take()
    t0 = time.perf_counter()
    p = commands.plan(str(campaign))
    backend = get_backend("slurm", p.campaign.backend.options)
    live = backend.scheduler_states(p.campaign_dir, p.unfinished) if (p.campaign_dir / "jobs.json").exists() else {}
    todo = commands.submittable(p, scheduler_states=live)
    job = backend.submit(p, todo)
    return time.perf_counter() - t0, calls.take(), job, len(todo)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--keep", help="folder to keep the campaign in (default: a temp folder)")
    args = ap.parse_args()
    folder = Path(args.keep or tempfile.mkdtemp(prefix="ptbench-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    import submitit  # noqa: F401

    import ptbench.backends.slurm.backend  # noqa: F401  (imports are not submission work; the CLI figure below includes them)
    import ptbench.commands  # noqa: F401

    seconds, calls, job, n = submit(write_campaign(folder, args.trials), SlurmCallLog())
    try:
        tasks = subprocess.run(
            ["squeue", "-h", "-r", "-t", "all", "-j", job, "-o", "%i"], capture_output=True, text=True
        ).stdout.split()
    finally:
        subprocess.run(["scancel", job], check=False)
    # the same through the real command line, Python start-up and imports included
    cli_campaign = write_campaign(folder, args.trials, name="bench-submit-cli")
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "ptbench", "submit", str(cli_campaign)], capture_output=True, text=True)
    cli_seconds = time.perf_counter() - t0
    cli_job = out.stdout.split(" as job ")[-1].split(";")[0].strip() if " as job " in out.stdout else ""
    if cli_job:
        subprocess.run(["scancel", cli_job], check=False)
    report = {
        "trials": n,
        "seconds": round(seconds, 3),
        "scheduler_calls": len(calls),
        "calls": [c[0] for c in calls],
        "arrays": 1 if job else 0,
        "array_tasks_in_squeue": len(tasks),
        "job": job,
        "cli_seconds": round(cli_seconds, 3),
        "cli_ok": out.returncode == 0,
    }
    print(json.dumps(report))
    ok = report["scheduler_calls"] == 1 and len(tasks) == n and seconds < 3.0
    print(
        f"submit {n} trials: {seconds:.2f} s ({cli_seconds:.2f} s as `ptbench submit` with start-up), {len(calls)} scheduler call(s), "
        f"one array of {len(tasks)} tasks — "
        + ("within target (1 array, < 3 s)" if ok else "MISSES the target (1 array, < 3 s)"),
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
