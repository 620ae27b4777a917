"""Run journal overhead on a write-heavy workload: the same workload with and without the journal.

The workload runs in its own process (as the agent would), in a trial directory's workspace:
- small: SMALL files of 4 KiB in 100 nested folders (a pip install, a git checkout), half deleted;
- churn: CHURN temp files written and deleted at once (compilers, lock files: the race the journal
  must win), and atomic rewrites (write a temp, rename over the target);
- large: LARGE files of MB MiB of text each (datasets, logs), then deleted;
- weights: one WEIGHTS_MB MiB safetensors file (skipped by content type, not copied).

What it prints, per run (journal off, then on, REPEAT times each, the median):
- workload_s: the workload's wall time (what the agent feels); overhead_pct = on vs off;
- drain_s: from the workload's end until the journal has processed every event (flush);
- journal_busy_s: time the journal spent copying; journal_cpu_s: the runner process's CPU time
  (user+sys) during the run, which is all journal work (the workload is another process);
- files_kept / bytes_kept / skipped / missed: from the journal's summary; the churn files live for
  microseconds, so most of them are `missed` (short-lived, counted; see docs/integrity.md).

    PYTHONPATH=src python scripts/bench_journal.py [--small 5000] [--churn 2000] [--large 4] [--mb 64]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORKLOAD = r"""
import json, os, struct, sys
root, small, churn, large, mb, wmb = sys.argv[1], *map(int, sys.argv[2:7])
os.chdir(root)
for i in range(small):
    d = f"pkg/m{i % 100}"
    os.makedirs(d, exist_ok=True)
    with open(f"{d}/f{i}.py", "w") as fh:
        fh.write(f"# module {i}\n" + "x = 1\n" * 680)
for i in range(0, small, 2):
    os.unlink(f"pkg/m{i % 100}/f{i}.py")
for i in range(churn):
    with open(f"tmp{i}.lock", "w") as fh:
        fh.write("pid %d\n" % i)
    os.unlink(f"tmp{i}.lock")
    with open("state.json.tmp", "w") as fh:
        fh.write(json.dumps({"step": i}))
    os.replace("state.json.tmp", "state.json")
line = ("the quick brown fox jumps over the lazy dog " * 2 + "\n").encode()
for i in range(large):
    with open(f"big{i}.txt", "wb") as fh:
        for _ in range(mb * (1 << 20) // len(line)):
            fh.write(line)
for i in range(large):
    os.unlink(f"big{i}.txt")
header = json.dumps({"w": {"dtype": "F32", "shape": [wmb << 18], "data_offsets": [0, wmb << 20]}}).encode()
with open("model.safetensors", "wb") as fh:
    fh.write(struct.pack("<Q", len(header)) + header)
    for _ in range(wmb):
        fh.write(bytes(1 << 20))
"""


def _trial(base: Path):
    from ptbench.trial import TrialDir

    path = base / "t"
    for d in ("workspace", "home"):
        (path / d).mkdir(parents=True, exist_ok=True)
    return TrialDir(path)


def one(args, journal_on: bool) -> dict:
    from ptbench.integrity.journal import CANNOT_SEE_ALWAYS
    from ptbench.runner.journal import RunJournal, sandbox_dirs

    with tempfile.TemporaryDirectory(prefix="bench-journal-", dir=args.dir) as tmp:
        trial = _trial(Path(tmp))
        journal = None
        if journal_on:
            roots = [trial.workspace, trial.home, *sandbox_dirs(trial)]
            journal = RunJournal(trial, roots, sandbox="bwrap", max_bytes=16 << 30, cannot_see=CANNOT_SEE_ALWAYS)
            journal.start()
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        argv = [sys.executable, "-c", WORKLOAD, str(trial.workspace)]
        argv += [str(x) for x in (args.small, args.churn, args.large, args.mb, args.weights_mb)]
        subprocess.run(argv, check=True)
        t1 = time.perf_counter()
        out = {"workload_s": t1 - t0}
        if journal is not None:
            journal.flush()
            out["drain_s"] = time.perf_counter() - t1
            run = journal.stop()
            cpu1 = resource.getrusage(resource.RUSAGE_SELF)
            out["journal_cpu_s"] = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
            out["journal_busy_s"] = run["busy_seconds"]
            for k in ("files_kept", "bytes_kept", "skipped", "missed"):
                out[k] = run[k]
            out["gaps"] = run["gaps"]
        return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--small", type=int, default=5000)
    ap.add_argument("--churn", type=int, default=2000)
    ap.add_argument("--large", type=int, default=4)
    ap.add_argument("--mb", type=int, default=64)
    ap.add_argument("--weights-mb", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=None, help="where the trial directories go (default: the temp folder)")
    args = ap.parse_args()
    runs: dict[str, list[dict]] = {"off": [], "on": []}
    for _ in range(args.repeat):
        for mode in ("off", "on"):
            runs[mode].append(one(args, mode == "on"))
    off = statistics.median(r["workload_s"] for r in runs["off"])
    on = statistics.median(r["workload_s"] for r in runs["on"])
    written = args.small * 4096 + args.large * args.mb * (1 << 20) + args.weights_mb * (1 << 20)
    report = {
        "workload": {
            "small_files": args.small,
            "churn_files": args.churn,
            "large_files": args.large,
            "large_mb": args.mb,
            "weights_mb": args.weights_mb,
            "bytes_written_approx": written,
        },
        "workload_s_off": round(off, 3),
        "workload_s_on": round(on, 3),
        "overhead_pct": round(100 * (on - off) / off, 1),
        "drain_s": round(statistics.median(r["drain_s"] for r in runs["on"]), 3),
        "journal_cpu_s": round(statistics.median(r["journal_cpu_s"] for r in runs["on"]), 3),
        "journal_busy_s": round(statistics.median(r["journal_busy_s"] for r in runs["on"]), 3),
        "journal_mb_per_s": round(
            statistics.median(r["bytes_kept"] for r in runs["on"])
            / (1 << 20)
            / max(1e-9, statistics.median(r["journal_busy_s"] for r in runs["on"])),
            1,
        ),
        "runs_on": [{k: v for k, v in r.items() if k != "gaps"} | {"gaps": len(r["gaps"])} for r in runs["on"]],
        "cpus": os.cpu_count(),
        "loadavg_1min": os.getloadavg()[0],  # other work on the machine: compare runs only at a low load
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
