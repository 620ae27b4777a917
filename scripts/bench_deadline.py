"""Deadline -> last process gone, for a hostile agent that ignores SIGTERM and tries to escape.

    PYTHONPATH=src python scripts/bench_deadline.py [--sandbox bwrap|none] [--grace 2] [--runs 3] [--tiny]

Runs the test agent `escaper` (tests/fixtures/agents: nohup, setsid + double fork, its own tmux
server, SIGTERM ignored) with a 10 s budget through `ptbench trial run`, polls every 5 ms for any
process of the agent (the runner's descendants started before the deadline, and anything named
ptb-escape-TAG; not the later stages' own children), and prints the time from the runner's
`deadline` event to the last one gone (target: < grace + 1 s), and how the runner killed them
(`terminated` event: cgroup.kill where the node has a writable cgroup v2, else subreaper).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
CAMPAIGN = """
name: bench
agents: [{{name: escaper, options: {{tag: "{tag}"}}}}]
base_models: [{{id: local/empty, path: "{empty}", label: empty}}]
tasks: [{{name: arithmetic, options: {{n_test: 4}}}}]
budget: {{hours: 0.0028, gpus: 0, grace_seconds: {grace}}}
results_dir: "{results}"
sandbox: {sandbox}
"""


def _job_processes(root: psutil.Process, tag: str) -> dict[int, float]:
    """pid -> start time of every live (not zombie) process of the job."""
    procs = []
    try:
        procs = root.children(recursive=True)
    except psutil.Error:
        pass
    for p in psutil.process_iter(["cmdline"]):
        try:
            if any(f"ptb-escape-{tag}" in a for a in p.info["cmdline"] or []):
                procs.append(p)
        except psutil.Error:
            pass
    out = {}
    for p in procs:
        try:
            if p.status() != psutil.STATUS_ZOMBIE:
                out[p.pid] = p.create_time()
        except psutil.Error:
            pass
    return out


def one_run(sandbox: str, grace: float) -> tuple[float, str]:
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path, tag = Path(tmp), uuid.uuid4().hex[:8]
        (tmp_path / "empty").mkdir()
        campaign = tmp_path / "c.yaml"
        campaign.write_text(
            CAMPAIGN.format(
                tag=tag, empty=tmp_path / "empty", grace=grace, results=tmp_path / "results", sandbox=sandbox
            )
        )
        env = {**os.environ, "PTBENCH_AGENTS_PATH": str(REPO / "tests" / "fixtures" / "agents")}
        subprocess.run(
            [sys.executable, "-m", "ptbench", "plan", str(campaign)], check=True, env=env, capture_output=True
        )
        trial = next((tmp_path / "results" / "bench").glob("*/trial.json")).parent
        job = subprocess.Popen(
            [sys.executable, "-m", "ptbench", "trial", "run", str(trial)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        root = psutil.Process(job.pid)
        last_seen: dict[tuple[int, float], float] = {}  # (pid, start time) -> when last seen alive
        while job.poll() is None:
            now = time.time()
            for pid, started in _job_processes(root, tag).items():
                if pid != job.pid:
                    last_seen[(pid, started)] = now
            time.sleep(0.005)
        events = [json.loads(line) for line in (trial / "events.jsonl").read_text().splitlines()]
        deadline = next(e["time"] for e in events if e["event"] == "deadline")
        mechanism = next(e.get("mechanism", "?") for e in events if e["event"] == "terminated")
        left = _job_processes(root, tag)
        if left:
            raise SystemExit(f"processes survived the runner: {sorted(left)}")
        agent = [seen for (pid, started), seen in last_seen.items() if started < deadline]
        return max(agent) - deadline, mechanism


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sandbox", default="bwrap")
    ap.add_argument("--grace", type=float, default=2.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument(
        "--tiny", action="store_true", help="smallest run (the test suite's smoke run; its figures mean little)"
    )
    args = ap.parse_args()
    if args.tiny:
        args.runs = 1
    runs = [one_run(args.sandbox, args.grace) for _ in range(args.runs)]
    times = [t for t, _ in runs]
    print(
        f"sandbox {args.sandbox}, grace {args.grace:g} s, killed by {'/'.join(sorted({m for _, m in runs}))}: "
        f"deadline -> last process gone, median {statistics.median(times):.3f} s, "
        f"max {max(times):.3f} s over {len(times)} runs (target < grace + 1 s = {args.grace + 1:g} s)"
    )


if __name__ == "__main__":
    main()
