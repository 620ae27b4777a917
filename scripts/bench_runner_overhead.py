"""Benchmark: runner overhead from `ptbench trial run` start to the agent process starting (target < 1 s).

No sandbox. The clock starts just before the runner process is spawned (so Python's own start-up
counts) and stops at the first instruction of the agent, which stamps the time into a file.
Run: python scripts/bench_runner_overhead.py [repeats] [--tiny]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

AGENT = {
    "name": "stamp",
    "command": ["bash", "-c", "date +%s.%N > started_at; cp -r '{{ base_model }}' final_model"],
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("repeats", nargs="?", type=int, default=5)
    ap.add_argument("--tiny", action="store_true", help="one run (the test suite's smoke run; its figures mean little)")
    args = ap.parse_args()
    repeats = 1 if args.tiny else args.repeats
    tmp = Path(tempfile.mkdtemp(prefix="ptbench-bench-runner-"))
    (tmp / "agents" / "stamp").mkdir(parents=True)
    (tmp / "agents" / "stamp" / "agent.yaml").write_text(yaml.safe_dump(AGENT))
    (tmp / "model").mkdir()
    (tmp / "model" / "config.json").write_text("{}")
    env = {**os.environ, "PTBENCH_AGENTS_PATH": str(tmp / "agents")}
    campaign = {
        "name": "overhead",
        "agents": ["stamp"],
        "base_models": [{"id": "x/m", "path": str(tmp / "model")}],
        "tasks": [{"name": "arithmetic", "options": {"n_test": 5}}],
        "seeds": list(range(repeats)),
        "budget": {"hours": 1, "gpus": 0},
        "results_dir": str(tmp / "results"),
    }
    (tmp / "c.yaml").write_text(yaml.safe_dump(campaign))
    subprocess.run(
        [sys.executable, "-m", "ptbench", "plan", str(tmp / "c.yaml")], check=True, env=env, capture_output=True
    )
    overheads = []
    try:
        for trial in sorted((tmp / "results" / "overhead").glob("*__s*")):
            t0 = time.time()
            # stop after the solve stage: evaluating the placeholder model is not what we measure
            proc = subprocess.Popen(
                [sys.executable, "-m", "ptbench", "trial", "run", str(trial)],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            stamp = trial / "workspace" / "started_at"
            while not stamp.exists() or not stamp.read_text().strip():
                time.sleep(0.005)
            overheads.append(float(stamp.read_text()) - t0)
            proc.terminate()
            proc.wait()
        print(
            f"runner start -> agent start over {len(overheads)} runs: median {statistics.median(overheads):.3f} s, "
            f"min {min(overheads):.3f} s, max {max(overheads):.3f} s  (target < 1 s)"
        )
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
