"""Benchmark: `ptbench report` on 1,000 trials with trajectories (targets: < 20 s, index page < 2 MB).

Run: python scripts/bench_report.py [N]   (prints the time of the whole command and the page sizes)

Each generated trial has a trajectory of 60 steps (messages, tool calls with arguments and outputs
up to 30 kB) and 200 evaluation samples, like a long agent run.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_collate import generate


def add_trial_files(cdir: Path, rng: random.Random) -> None:
    for trial in (p for p in cdir.iterdir() if p.is_dir()):
        steps = []
        for i in range(60):
            if i % 3:
                out = (f"epoch {i} loss {rng.random():.4f}\n" * 1500)[: rng.choice([200, 2000, 30000])]
                steps.append(
                    {
                        "index": i,
                        "kind": "tool_call",
                        "tool_call": {
                            "name": "Bash",
                            "arguments": {"command": f"python train.py --step {i}"},
                            "output": out,
                            "status": "ok",
                            "exit_code": 0,
                        },
                    }
                )
            else:
                steps.append(
                    {"index": i, "kind": "message", "text": "Thinking about the next step. " * rng.randint(1, 40)}
                )
        (trial / "agent").mkdir()
        (trial / "agent" / "trajectory.json").write_text(
            json.dumps({"schema_version": 1, "agent": "a", "trace_format": "t", "steps": steps})
        )
        (trial / "eval").mkdir()
        (trial / "eval" / "samples.jsonl").write_text(
            "".join(
                json.dumps({"id": f"q{k}", "reference": "42", "completion": "The answer is 42. " * 20, "score": 1.0})
                + "\n"
                for k in range(200)
            )
        )


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000
    tmp = Path(tempfile.mkdtemp(prefix="ptbench-bench-report-"))
    cdir = generate(tmp / "results", n)
    add_trial_files(cdir, random.Random(1))
    t, cpu0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    run = subprocess.run(
        [sys.executable, "-m", "ptbench", "report", str(cdir), "--out", str(tmp / "site")],
        capture_output=True,
        text=True,
    )
    took, cpu1 = time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime
    assert run.returncode == 0, run.stderr
    pages = list((tmp / "site" / "trials").glob("*.html"))
    sizes = sorted(p.stat().st_size for p in pages)
    print(
        f"{len(pages)} trial pages from {n} trials in {tmp / 'site'}; load average {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} CPUs"
    )
    print(f"`ptbench report`, end to end (collate, tables, plots, every page): {took:.2f} s wall, {cpu:.2f} s CPU")
    print(
        f"index.html: {(tmp / 'site' / 'index.html').stat().st_size / 1e6:.2f} MB; trial pages: median "
        f"{sizes[len(sizes) // 2] / 1e3:.0f} kB, largest {sizes[-1] / 1e3:.0f} kB"
    )


if __name__ == "__main__":
    main()
