"""Gateway overhead: added latency per streamed call (vs the upstream directly) and gateway CPU per call.

    PYTHONPATH=src python scripts/bench_gateway.py [--calls 300] [--concurrency 64] [--body-kb 1.5] [--floor]
        [--no-transcript] [--tiny]

The gateway keeps its transcript (record/transcript.jsonl, a thread of its own) as in a trial;
--no-transcript measures it without. Each call's body is a conversation with one new message.

The upstream is a local SSE server in its own process streaming an Anthropic Messages reply (message_start, 40 text
deltas, message_delta with usage, message_stop). The gateway runs in its own process (as in a
trial it runs in the runner's), so its CPU time is measured alone (psutil). Direct and gateway
calls alternate one by one (machine noise hits both alike); the added latency is the median of the
per-pair differences. CPU per call is measured over several rounds (min and median printed). The
load average is printed beside the figures: on a busy machine both numbers mostly measure waiting
for a core.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import subprocess
import sys
import time

import aiohttp
import psutil
from aiohttp import web

from ptbench.core.private_aiohttp import bound_port

_DELTA = (
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"'
    + b"x" * 60
    + b'"}}\n\n'
)
_START = (
    b'event: message_start\ndata: {"type":"message_start",'
    b'"message":{"id":"m","usage":{"input_tokens":1200,"output_tokens":1}}}\n\n'
)
_END = (
    b'event: message_delta\ndata: {"type":"message_delta",'
    b'"delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":400}}\n\n'
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
)
TOKEN = "ptb-trial-bench-token"


async def _upstream(request: web.Request) -> web.StreamResponse:
    await request.read()
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await resp.prepare(request)
    await resp.write(_START)
    for _ in range(40):
        await resp.write(_DELTA)
    await resp.write(_END)
    await resp.write_eof()
    return resp


def serve_upstream() -> None:
    """The upstream in a process of its own (as the real provider is): in the client's process it
    would share the GIL with the client and slow the direct calls, not the gateway's."""

    async def run() -> None:
        app = web.Application()
        app.router.add_post("/v1/messages", _upstream)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        print(f"http://127.0.0.1:{bound_port(site)}", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)

    asyncio.run(run())


def start_upstream() -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, __file__, "--serve-upstream"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )


GATEWAY = """
import sys, time
from ptbench.gateway import Gateway, Upstream, gateway_in_thread
extra = {{}}
if {transcript!r}:  # (an older ptbench, without a transcript, runs with --no-transcript: the figures before)
    from ptbench.gateway.transcript import Transcript
    extra["transcript"] = Transcript({transcript!r})
gw = Gateway({token!r}, Upstream("agent", {upstream!r}, "sk-real-bench-key", cost_cap_usd=1e9), calls_path={calls!r},
             **extra)
with gateway_in_thread(gw):
    print(gw.base_url, flush=True)
    sys.stdin.read()
"""

# --floor: the same pass-through with nothing of the gateway's own (no token, allow-list, usage
# scan, records): what aiohttp's server and client cost by themselves on this machine.
BARE = """
import asyncio, sys, aiohttp
from aiohttp import web
from ptbench.core.aioserve import start_catch_all
from ptbench.gateway import new_event_loop

async def main():
    session = aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar(), skip_auto_headers=("User-Agent",))
    async def handle(request):
        raw = await request.read()
        headers = {{"content-type": "application/json", "x-api-key": "k"}}
        reply = await session.post({upstream!r} + request.path, data=raw, headers=headers)
        out = web.StreamResponse(status=reply.status, headers={{"Content-Type": reply.headers.get("Content-Type", "")}})
        await out.prepare(request)
        while chunk := await reply.content.readany():
            await out.write(chunk)
        await out.write_eof()
        reply.release()
        return out
    _, url = await start_catch_all(handle)
    print(url, flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)

new_event_loop().run_until_complete(main())
"""


def cpu_per_call(proc: subprocess.Popen, url: str, n: int, width: int) -> float:
    p = psutil.Process(proc.pid)
    before = sum(p.cpu_times()[:2])
    asyncio.run(concurrent(url, n, width))
    return (sum(p.cpu_times()[:2]) - before) * 1000 / n


_CALLS = itertools.count()
BODY = {"body_kb": 1.5}  # set by --body-kb: agents send the whole conversation each call (often 100 KB and more)


async def _call(session: aiohttp.ClientSession, url: str) -> float:
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 400,
        "stream": True,
        "messages": [
            {"role": "user", "content": "hi " * int(BODY["body_kb"] * 1024 / 3)},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": f"call {next(_CALLS)}"},  # new in each call: the transcript keeps it
        ],
    }
    t0 = time.perf_counter()
    async with session.post(
        url + "/v1/messages", data=json.dumps(body), headers={"x-api-key": TOKEN, "content-type": "application/json"}
    ) as r:
        async for _ in r.content.iter_any():
            pass
        assert r.status == 200, r.status
    return time.perf_counter() - t0


async def paired(direct_url: str, gateway_url: str, n: int) -> tuple[list[float], list[float]]:
    """n calls each way, alternating, on warm keep-alive connections."""
    async with aiohttp.ClientSession() as a, aiohttp.ClientSession() as b:
        for _ in range(10):
            await _call(a, direct_url)
            await _call(b, gateway_url)
        direct, via = [], []
        for _ in range(n):
            direct.append(await _call(a, direct_url))
            via.append(await _call(b, gateway_url))
        return direct, via


async def concurrent(url: str, n: int, width: int) -> None:
    sem = asyncio.Semaphore(width)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=width)) as s:

        async def one() -> None:
            async with sem:
                await _call(s, url)

        await asyncio.gather(*(one() for _ in range(n)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=300, help="calls each way for the latency pairs")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3, help="rounds of the concurrent CPU measurement")
    ap.add_argument("--body-kb", type=float, default=1.5, help="size of each request body")
    ap.add_argument(
        "--floor", action="store_true", help="also measure a bare aiohttp pass-through, in alternate rounds"
    )
    ap.add_argument(
        "--no-transcript", action="store_true", help="the gateway without its transcript (record/transcript.jsonl)"
    )
    ap.add_argument("--serve-upstream", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument(
        "--tiny", action="store_true", help="smallest run (the test suite's smoke run; its figures mean little)"
    )
    args = ap.parse_args()
    if args.tiny:
        args.calls, args.concurrency, args.rounds = 20, 4, 1
    if args.serve_upstream:
        return serve_upstream()
    BODY["body_kb"] = args.body_kb
    import os
    import tempfile

    upstream_proc = start_upstream()
    upstream = upstream_proc.stdout.readline().strip()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        transcript = "" if args.no_transcript else f"{tmp}/transcript.jsonl"
        code = GATEWAY.format(token=TOKEN, upstream=upstream, calls=f"{tmp}/calls.jsonl", transcript=transcript)
        proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            gw = proc.stdout.readline().strip()
            direct, via = asyncio.run(paired(upstream, gw, args.calls))
            added_ms = statistics.median(v - d for d, v in zip(direct, via, strict=True)) * 1000
            n = args.calls * 2
            cpu, floor = [], []
            if args.floor:
                bare = subprocess.Popen(
                    [sys.executable, "-c", BARE.format(upstream=upstream)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                )
                bare_url = bare.stdout.readline().strip()
                asyncio.run(concurrent(bare_url, 100, args.concurrency))  # warm, as the gateway was by the pairs
            for _ in range(args.rounds):
                cpu.append(cpu_per_call(proc, gw, n, args.concurrency))
                if args.floor:
                    floor.append(cpu_per_call(bare, bare_url, n, args.concurrency))
            if args.floor:
                bare.stdin.close()
                bare.wait(30)
            lines = sum(1 for _ in open(f"{tmp}/calls.jsonl"))
            proc.stdin.close()
            proc.wait(30)  # the transcript is written to the end before the gateway exits
            said = sum(1 for _ in open(transcript)) if transcript else 0
        finally:
            proc.stdin.close()
            proc.wait(30)
            upstream_proc.stdin.close()
            upstream_proc.wait(30)
    load = os.getloadavg()
    print(f"load average {load_before[0]:.2f} before, {load[0]:.2f} after ({os.cpu_count()} cores)")
    print(
        f"streamed call, median: direct {statistics.median(direct) * 1000:.2f} ms, via gateway "
        f"{statistics.median(via) * 1000:.2f} ms, added {added_ms:.2f} ms (median of {args.calls} paired differences; "
        "target < 2 ms)"
    )
    print(
        f"gateway CPU per call at {args.concurrency} concurrent streams: min {min(cpu):.3f} ms, median "
        f"{statistics.median(cpu):.3f} ms over {args.rounds} rounds of {n} calls (target < 0.5 ms); {lines} calls "
        f"recorded, {said} transcript lines" + (" (transcript off)" if args.no_transcript else "")
    )
    if floor:
        print(
            f"bare aiohttp pass-through (no checks, records or usage scan), same rounds: min {min(floor):.3f} ms, "
            f"median {statistics.median(floor):.3f} ms"
        )


if __name__ == "__main__":
    main()
