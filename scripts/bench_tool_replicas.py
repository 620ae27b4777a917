#!/usr/bin/env python
"""Tool-server replicas (issue 16, part 3): throughput through replicas and the cost of losing one.

    python scripts/bench_tool_replicas.py [--episodes 300] [--concurrency 32] [--json out.json] [--tiny]

1. sql_explore with its stateful sql_query tool on N local replicas (N = 1, 3), endpoint with a
   fixed 20 ms latency in a separate process: episodes/s and tool calls/s through the replicas,
   from the first episode's start to the last one's end (replica start-up not counted).
2. Failover: one of 3 replicas SIGKILLed (refused connections) or SIGSTOPped (accepts, never
   answers; the tool's 2 s timeout and a 5 s health check find it) after 20% of the episodes:
   seconds from the kill to the first replayed episode, episodes replayed, wall time vs no failure,
   and every episode recorded exactly once.
Replicas, the shard and the endpoint share this machine's cores (2 in the dev box), so absolute
rates mostly measure that; the failover figures do not depend on it.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

# E402 below: these imports need the sys.path entry made above
from tests.bootcamp.chat_endpoint import serve_in_process  # noqa: E402
from tests.bootcamp.policies import sql_policy  # noqa: E402

from ptbench.bootcamp import generate, load_bootcamp  # noqa: E402
from ptbench.bootcamp.data.datagen import Shard  # noqa: E402
from ptbench.bootcamp.rollout.runner import RolloutSettings, run_shard, write_settings  # noqa: E402
from ptbench.bootcamp.serving.replicas import read_replicas, read_token  # noqa: E402
from ptbench.core.files import read_jsonl  # noqa: E402
from ptbench.rollout_launcher.tool_replicas import tool_replicas  # noqa: E402


def _rollout(root: Path, url: str, episodes: int, concurrency: int, replicas: int) -> Path:
    data = yaml.safe_load((REPO / "campaigns" / "bootcamp" / "sql_explore.yaml").read_text())
    data["splits"] = {"test": episodes}
    data["tools"][0].update(remote=True, timeout_s=2)
    (root / "cfg.yaml").write_text(yaml.safe_dump(data))
    cfg = load_bootcamp(root / "cfg.yaml")
    if not (root / "data").exists():
        generate(cfg, root / "data", parquet=False)
    out = root / f"out-{time.monotonic_ns()}"
    write_settings(
        out,
        RolloutSettings(
            config=cfg,
            config_hash=cfg.config_hash(),
            data_dir=str(root / "data"),
            split="test",
            endpoint=url,
            model="scripted",
            concurrency=concurrency,
            max_retries=0,
            tool_replicas=replicas,
            tool_replica_wait_s=60,
        ),
    )
    return out


def _run(
    root: Path, url: str, episodes: int, concurrency: int, replicas: int, kill: signal.Signals | None = None
) -> dict:
    out = _rollout(root, url, episodes, concurrency, replicas)
    killed: dict = {}

    def on_episode(trace: dict) -> None:
        if (
            kill is None
            or killed
            or sum(1 for _ in read_jsonl(out / "shards" / "shard-00000-of-00001.jsonl")) < episodes // 5
        ):
            return
        info = read_replicas(out, read_token(out))[0]
        os.kill(info["pid"], kill)
        killed.update(info, at=time.time())

    with tool_replicas(out, replicas, "local"):
        counts = run_shard(out, Shard(0, 1), on_episode=on_episode)
    recs = list(read_jsonl(out / "shards" / "shard-00000-of-00001.jsonl"))
    # from the first episode's start to the last one's end: the replicas' own start-up is not counted
    wall = max(r["started_at"] + r["latency_s"] for r in recs) - min(r["started_at"] for r in recs)
    ids = [r["sample_id"] for r in recs]
    res = {
        "replicas": replicas,
        "episodes": len(recs),
        "unique": len(set(ids)),
        "ok": counts["ok"],
        "wall_s": round(wall, 2),
        "episodes_per_s": round(len(recs) / wall, 1),
        "tool_calls_per_s": round(sum(r["n_tool_calls"] for r in recs) / wall, 1),
    }
    if kill is not None:
        hops = [h for r in recs for h in r["restarts"]]
        res.update(
            kill=kill.name,
            replayed=len(hops),
            first_replay_after_s=round(min(h["at"] for h in hops) - killed["at"], 2) if hops else None,
            last_replay_after_s=round(max(h["at"] for h in hops) - killed["at"], 2) if hops else None,
        )
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=300)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--json", type=Path)
    ap.add_argument(
        "--tiny", action="store_true", help="smallest run (the test suite's smoke run; its figures mean little)"
    )
    args = ap.parse_args()
    if args.tiny:
        args.episodes, args.concurrency = 15, 6
    results = []
    with tempfile.TemporaryDirectory() as tmp, serve_in_process(sql_policy, latency_s=0.02) as url:
        root = Path(tmp)
        for n in (1, 3):
            results.append(_run(root, url, args.episodes, args.concurrency, n))
        for sig in (signal.SIGKILL, signal.SIGSTOP):
            results.append(_run(root, url, args.episodes, args.concurrency, 3, kill=sig))
    base = next(r["wall_s"] for r in results if r["replicas"] == 3 and "kill" not in r)
    for r in results:
        extra = ""
        if "kill" in r:
            extra = (
                f"  {r['kill']}: {r['replayed']} episodes replayed, first {r['first_replay_after_s']} s / last "
                f"{r['last_replay_after_s']} s after the kill, wall +{r['wall_s'] - base:.1f} s"
            )
        print(
            f"{r['replicas']} replica(s): {r['episodes']} episodes ({r['unique']} unique, {r['ok']} ok) in "
            f"{r['wall_s']} s = {r['episodes_per_s']} episodes/s, {r['tool_calls_per_s']} tool calls/s{extra}"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
