#!/usr/bin/env python
"""Bootcamp rollout benchmarks (issue 7): throughput vs ideal, harness CPU per model turn, faults.

    python scripts/bench_bootcamp_throughput.py [--episodes 2000] [--concurrency 128] [--json out.json] [--tiny]
        [--zero-only] [--runs N]

1. Fixed 50 ms endpoint latency, 3 model turns per episode (2 calculator calls + answer):
   throughput as a fraction of the ideal concurrency / latency.
2. Zero-latency endpoint: CPU seconds of the harness process per model turn (all of it: the
   environment's calculator calls and rewards included), and beside it the environment's share,
   measured by replaying the run's tool calls and rewards after it (docs/bootcamp.md, "Rollout throughput").
3. Faults (10% HTTP 500, 5% 429 with Retry-After, 2% requests hanging past the client timeout):
   every episode recorded exactly once; retries and final failures.
The scripted endpoint runs in a separate process so it does not share the harness's CPU.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

# E402 below: these imports need the sys.path entry made above
from tests.bootcamp.chat_endpoint import Faults, serve_in_process  # noqa: E402
from tests.bootcamp.policies import arithmetic_policy  # noqa: E402

from ptbench.bootcamp import generate, load_bootcamp  # noqa: E402
from ptbench.bootcamp.data.datagen import Shard, load_rows  # noqa: E402
from ptbench.bootcamp.environment import build_environment  # noqa: E402
from ptbench.bootcamp.rollout.runner import RolloutSettings, run_shard, write_settings  # noqa: E402
from ptbench.core.files import read_jsonl  # noqa: E402


def _dataset(root: Path, episodes: int) -> tuple[object, Path]:
    cfg_path = root / "bench.yaml"
    cfg_path.write_text(
        "name: bench\nseed: 5\nlevels:\n  - {name: l, generator: arithmetic, params: {n_terms: 4, max_value: 999}}\n"
        f"splits: {{test: {episodes}}}\ntools:\n  - {{name: calculator}}\nreward: {{name: boxed_number}}\n"
        "limits: {max_assistant_turns: 6, max_tool_calls: 8}\n"
    )
    cfg = load_bootcamp(cfg_path)
    generate(cfg, root / "data", parquet=False)
    return cfg, root / "data"


def _server_cpu() -> float:
    """CPU seconds used so far by the endpoint process (our only child process)."""
    kids = multiprocessing.active_children()
    return sum(sum(psutil.Process(k.pid).cpu_times()[:2]) for k in kids)


def _environment_cpu(cfg, data: Path, traces: list[dict]) -> float:
    """CPU seconds the environment's own code (the calculator's `execute_sync`, the reward) takes for
    these episodes, replayed in a loop with the same arguments and final texts: a lower bound on its
    share of the run, whose caches are colder."""
    env = build_environment(cfg)
    identities = {
        r["extra_info"]["sample_id"]: json.loads(r["reward_model"]["ground_truth"]) for r in load_rows(data, "test")
    }
    work = [(identities[t["sample_id"]], t["tool_calls"], t["final_text"]) for t in traces]
    tools = env.tools
    start = time.process_time()
    for identity, calls, final_text in work:
        states = {name: tool.create_sync(identity) for name, tool in tools.items()}
        for call in calls:
            tools[call["name"]].execute_sync(states[call["name"]], call["arguments"])
        env.reward.score(final_text, identity)
    return time.process_time() - start


def _run(
    cfg, data: Path, out: Path, url: str, concurrency: int, timeout_s: float = 30.0, max_retries: int = 6
) -> tuple[dict, float, float]:
    write_settings(
        out,
        RolloutSettings(
            config=cfg,
            config_hash=cfg.config_hash(),
            data_dir=str(data),
            split="test",
            endpoint=url,
            model="bench",
            concurrency=concurrency,
            request_timeout_s=timeout_s,
            max_retries=max_retries,
        ),
        force=True,
    )
    cpu0, t0, s0 = time.process_time(), time.perf_counter(), _server_cpu()
    counts = run_shard(out, Shard(0, 1))
    counts["server_cpu_s"] = _server_cpu() - s0
    return counts, time.perf_counter() - t0, time.process_time() - cpu0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=128)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--json", type=Path)
    ap.add_argument(
        "--tiny", action="store_true", help="smallest run (the test suite's smoke run; its figures mean little)"
    )
    ap.add_argument(
        "--zero-only", action="store_true", help="only the zero-latency part (harness CPU per turn), for paired reruns"
    )
    ap.add_argument("--runs", type=int, default=1, help="zero-latency runs in this process (the figure: their median)")
    args = ap.parse_args()
    if args.runs < 1:
        ap.error(f"--runs {args.runs}: give 1 or more")
    if args.tiny:
        args.episodes, args.concurrency = 20, 8
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cfg, data = _dataset(root, args.episodes)
        policy = arithmetic_policy(tool_turns=2)

        if not args.zero_only:
            with serve_in_process(policy, latency_s=args.latency) as url:
                _run(cfg, data, root / "warmup", url, args.concurrency)  # warm imports, connection pool, page cache
                counts, wall, cpu = _run(cfg, data, root / "latency", url, args.concurrency)
            calls = counts["requests"]
            ideal = calls / (args.concurrency / args.latency)
            results["latency"] = {
                "episodes": counts["ran"],
                "model_calls": calls,
                "wall_s": round(wall, 3),
                "ideal_s": round(ideal, 3),
                "fraction_of_ideal": round(ideal / wall, 3),
                "calls_per_s": round(calls / wall, 1),
                "harness_cpu_ms_per_call": round(1000 * cpu / calls, 3),
                "endpoint_cpu_ms_per_call": round(1000 * counts["server_cpu_s"] / calls, 3),
                "load_avg_1min_after": os.getloadavg()[0],
                "cpus": os.cpu_count(),
            }

        with serve_in_process(policy, latency_s=0.0) as url:
            _run(cfg, data, root / "warmup0", url, 32)
            runs = [_run(cfg, data, root / f"zero{i}", url, 32) for i in range(args.runs)]
        counts, wall, _ = runs[0]
        turns = counts["requests"]
        per_turn = [1000 * cpu / c["requests"] for c, _, cpu in runs]
        env_cpu = _environment_cpu(cfg, data, read_jsonl(root / "zero0" / "shards" / "shard-00000-of-00001.jsonl"))
        results["zero_latency"] = {
            "model_calls": turns,
            "wall_s": round(wall, 3),
            "harness_cpu_ms_per_turn": round(statistics.median(per_turn), 3),
            "of_which_environment_ms_per_turn": round(1000 * env_cpu / turns, 3),
            "endpoint_cpu_ms_per_turn": round(1000 * counts["server_cpu_s"] / turns, 3),
        }
        if args.runs > 1:  # the figure above is their median
            results["zero_latency"]["harness_cpu_ms_per_turn_runs"] = [round(x, 4) for x in per_turn]

        if not args.zero_only:
            faults = Faults(
                p_500=0.10, p_429=0.05, p_timeout=0.02, retry_after_s=0.2, hang_s=10.0, once_per_request=False, seed=1
            )
            with serve_in_process(policy, latency_s=args.latency, faults=faults) as url:
                counts, wall, _ = _run(cfg, data, root / "faults", url, args.concurrency, timeout_s=1.0, max_retries=6)
            recs = read_jsonl(root / "faults" / "shards" / "shard-00000-of-00001.jsonl")
            per_sample = Counter(r["sample_id"] for r in recs)
            kinds: Counter[str] = Counter()
            for r in recs:
                kinds.update(r["retries"])
            results["faults"] = {
                "episodes": args.episodes,
                "records": len(recs),
                "distinct_episodes": len(per_sample),
                "max_records_per_episode": max(per_sample.values()),
                "ok": counts["ok"],
                "final_failures": counts["error"],
                "retries": counts["retries"],
                "retries_by_kind": dict(kinds),
                "requests": counts["requests"],
                "wall_s": round(wall, 3),
            }
    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
