"""Battery environment under load: EPISODES episodes against the scripted endpoint at concurrency C.

What it prints, and how each figure is computed:
- cores_busy_pct: CPU time (user+system) of the heavy-tool worker processes over the rollout's wall
  time x the cores the shard may use. Only the workers count: the shard, the endpoint, the
  forkserver and this benchmark's monitor are reported apart.
- machine: /proc/stat over the same window: idle share of all cores, and the CPU that processes
  outside this benchmark used ("foreign", in cores); busy_pct_of_available = worker CPU /
  (wall x cores - foreign CPU), i.e. how much of the CPU the simulations could get they did get.
- model_call_overhead_ms: client-side latency of each chat call against an endpoint that answers
  at once, in another process (it shares no GIL with the shard): what the shard adds while the
  simulations saturate the cores (p50/p99/max); ..._after_the_start_burst_ms leaves out the first
  C calls (every episode's first request leaves at the same instant and queues behind the others).
  event_loop_lag_ms: how late a 10 ms sleep wakes up.
  ..._less_run_queue_wait_ms: the same latencies less the time the shard's and the endpoint's
  threads were runnable but waited for a CPU (/proc schedstat) during the call, counted two ways
  (the longest wait of one thread; all threads' waits summed), which bracket the delay: on a
  machine shared with other work, that wait is the kernel's (other sessions hold the cores).
The monitor samples /proc from its own process (forked before any thread), so measuring does not
load the shard's event loop. Cases: CASES distinct easy cases, played round-robin up to EPISODES.

    PYTHONPATH=src python scripts/bench_battery.py [--episodes 200] [--concurrency 32] [--cases 40] [--tiny]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

# E402 below: these imports need the sys.path entry made above
from tests.bootcamp.chat_endpoint import serve_in_process  # noqa: E402
from tests.bootcamp.sim_policies import battery_policy  # noqa: E402

from ptbench.bootcamp import load_bootcamp  # noqa: E402
from ptbench.bootcamp.data.datagen import load_rows  # noqa: E402
from ptbench.bootcamp.rollout import runner as rollout_mod  # noqa: E402
from ptbench.bootcamp.rollout.client import ChatClient  # noqa: E402
from ptbench.bootcamp.rollout.runner import RolloutSettings, _environment, _run_loop, run_rows, write_settings  # noqa: E402
from ptbench.bootcamp.serving.heavy import default_workers  # noqa: E402

LATENCIES: list[float] = []
STARTS: list[float] = []
RUN_QUEUE: list[tuple[float, float]] = []
TICK = os.sysconf("SC_CLK_TCK")
WATCHED = [os.getpid()]  # the shard; the endpoint is added once it runs


def _run_queue_waits() -> dict[int, int]:
    """Per thread of the watched processes: ns spent runnable but waiting for a CPU (schedstat field 2).
    Every thread counts: a pebble thread preempted while it holds the GIL stalls the event loop too."""
    out: dict[int, int] = {}
    for pid in WATCHED:
        try:
            for task in os.scandir(f"/proc/{pid}/task"):
                out[int(task.name)] = int(Path(task.path, "schedstat").read_text().split()[1])
        except OSError:
            pass
    return out


def _waits_s(before: dict[int, int], after: dict[int, int]) -> tuple[float, float]:
    """(longest wait of one thread, sum of all threads' waits) during a call: waits of different
    threads may overlap (the sum overstates the delay) or follow each other (the longest understates it)."""
    deltas = [after[t] - before.get(t, 0) for t in after] or [0]
    return max(deltas) / 1e9, sum(deltas) / 1e9


class TimedClient(ChatClient):
    """Records each call's client-side latency (the endpoint answers immediately), and how much of it
    the shard's loop thread and the endpoint spent waiting for a CPU that another task held."""

    connections = 0

    async def __aexit__(self, *exc):  # type: ignore[no-untyped-def]
        if self._session is not None:
            TimedClient.connections += self._session.opened
        await super().__aexit__(*exc)

    async def chat(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        t0, w0 = time.perf_counter(), _run_queue_waits()
        try:
            return await super().chat(*args, **kwargs)
        finally:
            STARTS.append(t0)
            LATENCIES.append(time.perf_counter() - t0)
            RUN_QUEUE.append(_waits_s(w0, _run_queue_waits()))


def _cpu_s(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for task in os.scandir(f"/proc/{pid}/task"):
            out += [int(c) for c in Path(task.path, "children").read_text().split()]
    except OSError:
        pass
    return out


def _machine() -> tuple[float, float]:
    """(all CPU time, idle + iowait time) in seconds, summed over cores."""
    ticks = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return sum(ticks[:8]) / TICK, (ticks[3] + ticks[4]) / TICK


def _monitor(shard: int, conn) -> None:  # type: ignore[no-untyped-def]
    """In its own process: the shard's process tree every 0.1 s, by pid (a replaced worker still counts)."""
    conn.recv()  # start
    m0, idle0 = _machine()
    workers: dict[int, float] = {}
    others: dict[int, float] = {}
    while not conn.poll(0.1):
        for child in _children(shard):
            if child == os.getpid():
                continue
            grandchildren = _children(child)  # the forkserver's children are the workers
            for pid, bucket in [(child, others)] + [(g, workers) for g in grandchildren]:
                cpu = _cpu_s(pid)
                if cpu is not None:
                    bucket[pid] = cpu
    m1, idle1 = _machine()
    conn.send(
        {
            "workers": sum(workers.values()),
            "others": sum(others.values()),
            "n_workers_seen": len(workers),
            "machine_cpu_s": m1 - m0,
            "machine_idle_s": idle1 - idle0,
            "monitor": _cpu_s(os.getpid()) or 0.0,
        }
    )


def _config(tmp: Path, args: argparse.Namespace):  # type: ignore[no-untyped-def]
    data = yaml.safe_load((REPO / "campaigns/bootcamp/battery.yaml").read_text())
    data["levels"] = [lv for lv in data["levels"] if lv["name"] == "easy"]
    data["splits"] = {"test": args.cases}
    data["tools"][0]["params"]["nice"] = args.nice
    (tmp / "battery.yaml").write_text(yaml.safe_dump(data))
    return load_bootcamp(tmp / "battery.yaml")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--cases", type=int, default=40)
    ap.add_argument("--nice", type=int, default=10, help="worker niceness above the shard's (the tool's default is 10)")
    ap.add_argument(
        "--tiny", action="store_true", help="smallest run (the test suite's smoke run; its figures mean little)"
    )
    args = ap.parse_args()
    if args.tiny:
        args.episodes, args.concurrency, args.cases = 4, 2, 4
    ctx = multiprocessing.get_context("fork")
    here, there = ctx.Pipe()
    monitor = ctx.Process(target=_monitor, args=(os.getpid(), there), daemon=True)
    monitor.start()  # before any thread exists in this process
    tmp = Path(tempfile.mkdtemp(prefix="bench-battery-"))
    cfg = _config(tmp, args)
    t = time.perf_counter()
    # In a child process, as `ptbench bootcamp generate` would: generating imports PyBaMM and builds
    # models, and a shard that held those objects would pay for them in every garbage collection.
    subprocess.run(
        [
            sys.executable,
            "-m",
            "ptbench",
            "bootcamp",
            "generate",
            str(tmp / "battery.yaml"),
            "--out",
            str(tmp / "data"),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    print(f"generated {args.cases} cases in {time.perf_counter() - t:.1f} s", flush=True)
    rows = load_rows(tmp / "data", "test")
    rows = [rows[i % len(rows)] for i in range(args.episodes)]
    rollout_mod.ChatClient = TimedClient  # type: ignore[misc]
    lags: list[float] = []
    with serve_in_process(battery_policy) as url:
        WATCHED.extend(pid for pid in _children(os.getpid()) if pid != monitor.pid)  # the endpoint
        settings = RolloutSettings(
            config=cfg,
            config_hash=cfg.config_hash(),
            data_dir=str(tmp / "data"),
            split="test",
            endpoint=url,
            model="scripted",
            concurrency=args.concurrency,
            request_timeout_s=60.0,
        )
        write_settings(tmp / "out", settings, force=True)
        (tmp / "out" / "shards").mkdir(parents=True, exist_ok=True)
        env, _ = _environment(settings, tmp / "out")  # no tool-server replicas here

        async def probed():  # type: ignore[no-untyped-def]
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

        own0 = sum(os.times()[:2])
        here.send("start")
        t0 = time.perf_counter()
        counts = _run_loop(probed())  # the loop the shard runs (uvloop where installed)
        wall = time.perf_counter() - t0
        here.send("stop")
        own = sum(os.times()[:2]) - own0
        usage = here.recv()
    monitor.join(10)
    cores = default_workers()
    foreign = max(
        0.0,
        usage["machine_cpu_s"] - usage["machine_idle_s"] - usage["workers"] - usage["others"] - own - usage["monitor"],
    )
    traces = [json.loads(x) for x in (tmp / "out" / "shards" / "bench.jsonl").read_text().splitlines()]
    lat, lg = sorted(LATENCIES), sorted(lags)
    # The first request of every episode leaves at the same instant (all start together): those queue
    # behind each other in the client and the endpoint. Reported apart from the steady state.
    order = sorted(range(len(STARTS)), key=STARTS.__getitem__)
    steady = sorted(LATENCIES[i] for i in order[args.concurrency :])
    upper = sorted(
        x - w for x, (w, _) in zip(LATENCIES, RUN_QUEUE, strict=True)
    )  # the shard's own share is at most this
    lower = sorted(max(0.0, x - w) for x, (_, w) in zip(LATENCIES, RUN_QUEUE, strict=True))  # ... and at least this

    def q(xs: list[float], p: float) -> float:
        return round(xs[min(len(xs) - 1, int(p * len(xs)))] * 1000, 2)

    print(
        json.dumps(
            {
                "episodes": len(traces),
                "ok": counts["ok"],
                "error": counts["error"],
                "mean_score": round(statistics.mean(t["score"] or 0 for t in traces), 4),
                "concurrency": args.concurrency,
                "workers": cores,
                "nice": args.nice,
                "wall_s": round(wall, 1),
                "simulations": sum(t["n_tool_calls"] for t in traces)
                + len(traces),  # tool simulations + one per reward
                "cores_busy_pct": round(100 * usage["workers"] / (wall * cores), 1),
                "machine": {
                    "cores": os.cpu_count(),
                    "load_average_1m_at_end": round(os.getloadavg()[0], 2),
                    "idle_pct": round(100 * usage["machine_idle_s"] / usage["machine_cpu_s"], 1),
                    "foreign_cpu_cores": round(foreign / wall, 2),
                    "busy_pct_of_available": round(100 * usage["workers"] / max(1e-9, wall * cores - foreign), 1),
                },
                "shard_cpu_pct_of_one_core": round(100 * own / wall, 1),
                "pybamm_loaded_in_shard": "pybamm" in sys.modules,
                "endpoint_forkserver_cpu_pct_of_one_core": round(100 * usage["others"] / wall, 1),
                "event_loop_lag_ms": {"p50": q(lg, 0.5), "p99": q(lg, 0.99), "max": round(lg[-1] * 1000, 2)},
                "model_calls": len(lat),
                "tcp_connections_opened": TimedClient.connections,
                "model_call_overhead_ms": {"p50": q(lat, 0.5), "p99": q(lat, 0.99), "max": round(lat[-1] * 1000, 2)},
                "model_call_overhead_after_the_start_burst_ms": {
                    "calls": len(steady),
                    "p50": q(steady, 0.5),
                    "p99": q(steady, 0.99),
                    "max": round(steady[-1] * 1000, 2),
                },
                "model_call_overhead_less_run_queue_wait_ms": {
                    "less_longest_wait": {
                        "p50": q(upper, 0.5),
                        "p99": q(upper, 0.99),
                        "max": round(upper[-1] * 1000, 2),
                    },
                    "less_summed_waits": {
                        "p50": q(lower, 0.5),
                        "p99": q(lower, 0.99),
                        "max": round(lower[-1] * 1000, 2),
                    },
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
