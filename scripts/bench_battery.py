"""Battery environment under load: EPISODES episodes against the scripted endpoint at concurrency C.

Prints how busy the heavy-tool workers keep the cores (worker CPU time / (wall x workers)) and the
model-call overhead: the client-side latency of each chat call against an endpoint that answers at
once, i.e. what the shard's event loop adds while simulations saturate the cores (p50/p99/max).
Cases: CASES distinct easy cases (PyBaMM is slow to generate), played round-robin up to EPISODES.

    PYTHONPATH=src python scripts/bench_battery.py [--episodes 200] [--concurrency 32] [--cases 40]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ptbench.bootcamp import generate, load_bootcamp  # noqa: E402
from ptbench.bootcamp import rollout as rollout_mod  # noqa: E402
from ptbench.bootcamp.client import ChatClient  # noqa: E402
from ptbench.bootcamp.datagen import load_rows  # noqa: E402
from ptbench.bootcamp.heavy import default_workers  # noqa: E402
from ptbench.bootcamp.rollout import RolloutSettings, _environment, run_rows, write_settings  # noqa: E402
from tests.bootcamp.chat_endpoint import serve_in_process  # noqa: E402
from tests.bootcamp.sim_policies import battery_policy  # noqa: E402

LATENCIES: list[float] = []


class TimedClient(ChatClient):
    """Records each call's client-side latency (the endpoint answers immediately)."""

    async def chat(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        t0 = time.perf_counter()
        try:
            return await super().chat(*args, **kwargs)
        finally:
            LATENCIES.append(time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--cases", type=int, default=40)
    ap.add_argument("--nice", type=int, default=10, help="worker niceness (the tool's default is 10)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-battery-"))
    data = yaml.safe_load((REPO / "campaigns/bootcamp/battery.yaml").read_text())
    data["levels"] = [lv for lv in data["levels"] if lv["name"] == "easy"]
    data["splits"] = {"test": args.cases}
    data["tools"][0]["params"]["nice"] = args.nice
    (tmp / "battery.yaml").write_text(yaml.safe_dump(data))
    cfg = load_bootcamp(tmp / "battery.yaml")
    t = time.perf_counter()
    generate(cfg, tmp / "data", parquet=False)
    print(f"generated {args.cases} cases in {time.perf_counter() - t:.1f} s")
    rows = load_rows(tmp / "data", "test")
    rows = [rows[i % len(rows)] for i in range(args.episodes)]
    rollout_mod.ChatClient = TimedClient  # type: ignore[misc]
    with serve_in_process(battery_policy) as url:
        settings = RolloutSettings(config=cfg, config_hash=cfg.config_hash(), data_dir=str(tmp / "data"), split="test", endpoint=url, model="scripted",
                                   concurrency=args.concurrency, request_timeout_s=60.0)
        write_settings(tmp / "out", settings, force=True)
        (tmp / "out" / "shards").mkdir(parents=True, exist_ok=True)
        env = _environment(settings, tmp / "out")
        cpu: dict[int, float] = {}
        other: dict[int, float] = {}
        stop = threading.Event()
        me = psutil.Process()
        own0 = sum(me.cpu_times()[:2])

        def sample() -> None:  # worker CPU time, by pid, so replaced workers still count
            while not stop.is_set():
                direct = {c.pid for c in me.children()}  # the endpoint, forkserver, resource tracker
                for c in me.children(recursive=True):
                    try:
                        ct = c.cpu_times()
                        (cpu if c.pid not in direct else other)[c.pid] = ct.user + ct.system  # workers: the forkserver's children
                    except psutil.Error:
                        pass
                time.sleep(0.2)

        threading.Thread(target=sample, daemon=True).start()
        t0 = time.perf_counter()
        lags: list[float] = []

        async def probed():  # event-loop lag: how late a 10 ms sleep wakes up (the harness's own stalls)
            async def probe() -> None:
                while True:
                    t = time.perf_counter()
                    await asyncio.sleep(0.01)
                    lags.append(time.perf_counter() - t - 0.01)

            task = asyncio.create_task(probe())
            try:
                return await run_rows(env, settings, rows, tmp / "out" / "shards" / "bench.jsonl")
            finally:
                task.cancel()

        counts = asyncio.run(probed())
        wall = time.perf_counter() - t0
        own = sum(me.cpu_times()[:2]) - own0
        stop.set()
    workers = default_workers()
    traces = [json.loads(x) for x in (tmp / "out" / "shards" / "bench.jsonl").read_text().splitlines()]
    lat = sorted(LATENCIES)
    p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000  # noqa: E731
    sims = sum(t["n_tool_calls"] for t in traces) + len(traces)  # tool simulations + one per reward
    print(json.dumps({
        "episodes": len(traces), "ok": counts["ok"], "error": counts["error"], "mean_score": round(statistics.mean(t["score"] or 0 for t in traces), 4),
        "concurrency": args.concurrency, "workers": workers, "nice": args.nice, "load_average_1m": round(psutil.getloadavg()[0], 2), "wall_s": round(wall, 1), "simulations": sims,
        "cores_busy_pct": round(100 * sum(cpu.values()) / (wall * workers), 1),
        "shard_process_cpu_pct_of_one_core": round(100 * own / wall, 1), "endpoint_and_helpers_cpu_pct_of_one_core": round(100 * sum(other.values()) / wall, 1),
        "event_loop_lag_ms": {"p50": round(sorted(lags)[len(lags) // 2] * 1000, 2), "p99": round(sorted(lags)[int(0.99 * len(lags))] * 1000, 2), "max": round(max(lags) * 1000, 2)},
        "model_calls": len(lat), "model_call_overhead_ms": {"p50": round(p(0.5), 2), "p99": round(p(0.99), 2), "max": round(lat[-1] * 1000, 2)},
    }, indent=2))


if __name__ == "__main__":
    main()
