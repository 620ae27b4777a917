#!/usr/bin/env python
"""HTCondor tool-server replicas (issue 16, part 3): how soon they leave once the rollout ended.

    python scripts/bench_htcondor_replicas.py [--replicas 3] [--shards 8] [--rounds 3] [--tiny]

Renders the replicas' submit description (`htcondor_replicas.render`), starts each replica as the
description says (its `arguments` and `environment`, $(ProcId) expanded; no schedd needed), waits
until all announced themselves, then writes the shards' final files the way a finished shard does
and measures the seconds from the last one to every replica having exited and withdrawn its file.
Also prints the replicas' start-up time (launch to announcement). The check runs every 0.5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

os.environ.setdefault("CONDOR_CONFIG", "/dev/null")  # no pool here: only the submit parser is used
# E402 below: these imports need the sys.path entry made above
import htcondor2  # noqa: E402

from ptbench.bootcamp.data.datagen import Shard  # noqa: E402
from ptbench.bootcamp.serving.replicas import new_run, read_replicas, replica_dir  # noqa: E402
from ptbench.core.files import atomic_write_json  # noqa: E402
from ptbench.rollout_launcher import htcondor as htcondor_replicas  # noqa: E402


def start(description, proc: int, log: Path) -> subprocess.Popen:
    args = shlex.split(description["arguments"].strip('"').replace("$(ProcId)", str(proc)))
    env = dict(kv.split("=", 1) for kv in shlex.split(description["environment"].strip('"')))
    env = {k: v.replace("$(Cluster)", "1").replace("$(Process)", str(proc)) for k, v in env.items()}
    with open(log, "ab") as fh:
        return subprocess.Popen(
            [description["executable"], *args],
            cwd=description["initialdir"],
            stdout=fh,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": str(REPO / "src"), **env},
            start_new_session=True,
        )


def one_round(tmp: Path, n: int, shards: int) -> tuple[float, float]:
    out = tmp / "out"
    (out / "shards").mkdir(parents=True, exist_ok=True)
    description = htcondor2.Submit(
        htcondor_replicas.render(out, n, shards, {"python": sys.executable, "initialdir": str(tmp)}).read_text()
    )
    token = new_run(out)
    t0 = time.monotonic()
    procs = [start(description, i, tmp / f"replica-{i}.log") for i in range(n)]
    try:
        while len(read_replicas(out, token)) < n:
            if any(p.poll() is not None for p in procs):
                raise SystemExit(f"a replica exited early; logs in {tmp}")
            time.sleep(0.05)
        startup = time.monotonic() - t0
        for i in range(shards):
            atomic_write_json(out / "shards" / f"{Shard(i, shards).tag}.done.json", {"ok": 1, "error": 0})
        t1 = time.monotonic()
        for p in procs:
            p.wait(timeout=60)
        left = time.monotonic() - t1
        assert not list(replica_dir(out).glob("replica-*.json")), "a replica left its file behind"
        return startup, left
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--replicas", type=int, default=3)
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--tiny", action="store_true", help="smallest run (the test suite's smoke run; its figures mean little)"
    )
    a = ap.parse_args()
    if a.tiny:
        a.replicas, a.shards, a.rounds = 1, 1, 1
    results = []
    for _ in range(a.rounds):
        with tempfile.TemporaryDirectory() as d:
            results.append(one_round(Path(d), a.replicas, a.shards))
    ups, lefts = [r[0] for r in results], [r[1] for r in results]
    print(
        json.dumps(
            {
                "replicas": a.replicas,
                "shards": a.shards,
                "rounds": a.rounds,
                "startup_s_median": round(statistics.median(ups), 2),
                "exit_after_last_shard_s_median": round(statistics.median(lefts), 2),
                "exit_after_last_shard_s_max": round(max(lefts), 2),
            }
        )
    )


if __name__ == "__main__":
    main()
