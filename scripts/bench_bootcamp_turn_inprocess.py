#!/usr/bin/env python
"""The rollout harness's own CPU per model turn, without the network: a low-noise companion to
`bench_bootcamp_throughput.py`'s zero-latency figure (docs/bootcamp.md, "Rollout throughput").

    python scripts/bench_bootcamp_turn_inprocess.py [--episodes 2000] [--runs 5] [--tiny]

The same workload (the arithmetic bootcamp, 3 model turns per episode: two calculator calls and the
answer, 32 episodes in flight) through `run_shard`, traces written, but the rollout HTTP pool's
connections are in-process stand-ins: a request's answer (the scripted policy's, computed once per
distinct request body in a warm-up run, then looked up) is handed to the connection's
`data_received` on the next loop tick. So the figure is the shard's Python (episode loop, HTTP
framing, JSON, environment, trace writing, event loop) without the kernel's loopback TCP or an
endpoint process sharing the cores: CPU of the shard's process over its model calls, the median of
`--runs` runs in one process. Compare two checkouts by alternating processes (A B A B ...).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

# E402 below: these imports need the sys.path entries made above
from bench_bootcamp_throughput import _dataset  # noqa: E402
from tests.bootcamp.policies import arithmetic_policy  # noqa: E402

from ptbench.bootcamp.data.datagen import Shard  # noqa: E402
from ptbench.bootcamp.rollout import http  # noqa: E402
from ptbench.bootcamp.rollout.runner import RolloutSettings, run_shard, write_settings  # noqa: E402
from ptbench.core import fastjson  # noqa: E402

_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: %d\r\n"
    b"Date: Mon, 07 Dec 2026 14:29:26 GMT\r\nServer: Python/3.11 aiohttp/3.14.5\r\n\r\n"
)


class _Answers:
    """The scripted endpoint's answers, computed once per distinct request body."""

    def __init__(self) -> None:
        self.policy = arithmetic_policy(tool_turns=2)
        self.seen: dict[bytes, bytes] = {}

    def __call__(self, body: bytes) -> bytes:
        got = self.seen.get(body)
        if got is None:
            req = fastjson.loads(body)
            msg = self.policy(req["messages"], req.get("tools"))
            choice = {"index": 0, "message": msg, "finish_reason": "tool_calls" if msg.get("tool_calls") else "stop"}
            usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
            payload = fastjson.dumps({"id": "x", "object": "chat.completion", "choices": [choice], "usage": usage})
            got = self.seen[body] = _HEAD % len(payload) + payload
        return got


class _Transport:
    def __init__(self, protocol: http._Connection, answers: _Answers) -> None:
        self.protocol, self.answers = protocol, answers
        self.loop = asyncio.get_running_loop()

    def writelines(self, parts: Any) -> None:
        _, body = parts
        self.loop.call_soon(self.protocol.data_received, self.answers(body))

    def close(self) -> None:
        pass


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--tiny", action="store_true", help="smallest run (the test suite's smoke run)")
    args = ap.parse_args()
    if args.tiny:
        args.episodes, args.runs = 20, 1
    answers = _Answers()

    async def _open(self: http.HttpPool) -> http._Connection:
        conn = http._Connection()
        conn.connection_made(_Transport(conn, answers))  # type: ignore[arg-type]
        self.opened += 1
        return conn

    http.HttpPool._open = _open  # type: ignore[method-assign]
    per_turn: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cfg, data = _dataset(root, args.episodes)
        for i in range(args.runs + 1):  # run 0 warms up (and computes the answers)
            out = root / f"run{i}"
            settings = RolloutSettings(
                config=cfg,
                config_hash=cfg.config_hash(),  # type: ignore[attr-defined]
                data_dir=str(data),
                split="test",
                endpoint="http://127.0.0.1:9/v1",
                model="bench",
                concurrency=32,
            )
            write_settings(out, settings, force=True)
            cpu0 = time.process_time()
            counts = run_shard(out, Shard(0, 1))
            cpu = time.process_time() - cpu0
            if counts["ok"] != args.episodes:
                raise SystemExit(f"run {i}: {counts}")
            if i:
                per_turn.append(1000 * cpu / counts["requests"])
    print(
        json.dumps(
            {
                "episodes": args.episodes,
                "in_process_ms_per_turn": round(statistics.median(per_turn), 4),
                "runs": [round(x, 4) for x in per_turn],
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
