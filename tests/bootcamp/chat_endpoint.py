"""A minimal scripted OpenAI-compatible chat endpoint (aiohttp) for bootcamp tests and benchmarks.

A *policy* maps the request's messages to the next assistant message, so a test knows the exact
tool-call trajectory to expect. Faults (HTTP 500, 429 with Retry-After, hangs past the client's
timeout) and a fixed latency are injected here, at the HTTP seam, which is what the rollout client
has to survive against a real server.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import multiprocessing
import random
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

try:  # the endpoint must stay cheaper than the harness it measures
    import orjson

    _loads, _dumps = orjson.loads, orjson.dumps
except ImportError:  # pragma: no cover
    _loads, _dumps = json.loads, lambda o: json.dumps(o).encode()

Policy = Callable[[list[dict[str, Any]], list[dict[str, Any]] | None], dict[str, Any]]


@dataclass
class Faults:
    p_500: float = 0.0
    p_429: float = 0.0
    p_timeout: float = 0.0
    retry_after_s: float = 0.05
    hang_s: float = 30.0
    once_per_request: bool = True
    """Deterministic mode: a request body fails at most once (chosen by its hash), so every episode
    must eventually succeed and the number of injected faults is known exactly."""
    seed: int = 0


@dataclass
class EndpointStats:
    requests: int = 0
    ok: int = 0
    injected: dict[str, int] = field(default_factory=lambda: {"500": 0, "429": 0, "timeout": 0})
    bodies: list[dict[str, Any]] | None = None
    """Set to a list to record every request body (tests of what the client sends)."""


def make_app(
    policy: Policy, latency_s: float = 0.0, faults: Faults | None = None, stats: EndpointStats | None = None
) -> web.Application:
    faults = faults or Faults()
    stats = stats or EndpointStats()
    seen: dict[str, int] = {}
    rng = random.Random(faults.seed)

    def pick_fault(raw: bytes) -> str | None:
        if faults.once_per_request:
            digest = hashlib.sha256(raw).digest()
            key = digest.hex()
            if seen.get(key):
                return None
            seen[key] = 1
            u = int.from_bytes(digest[:8], "big") / 2**64
        else:
            u = rng.random()
        if u < faults.p_500:
            return "500"
        if u < faults.p_500 + faults.p_429:
            return "429"
        if u < faults.p_500 + faults.p_429 + faults.p_timeout:
            return "timeout"
        return None

    async def completions(request: web.Request) -> web.Response:
        raw = await request.read()
        stats.requests += 1
        fault = pick_fault(raw)
        if fault:
            stats.injected[fault] += 1
            if fault == "500":
                return web.json_response({"error": {"message": "injected"}}, status=500)
            if fault == "429":
                return web.json_response(
                    {"error": {"message": "slow down"}}, status=429, headers={"Retry-After": f"{faults.retry_after_s}"}
                )
            await asyncio.sleep(faults.hang_s)
        body = _loads(raw)
        if stats.bodies is not None:
            stats.bodies.append(body)
        if latency_s:
            await asyncio.sleep(latency_s)
        message = policy(body["messages"], body.get("tools"))
        if "__status__" in message:  # the policy asks for an HTTP error (e.g. a 400 context-length answer)
            return web.json_response({"error": {"message": message["__message__"]}}, status=message["__status__"])
        stats.ok += 1
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        out = {
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": len(raw) // 4, "completion_tokens": 7, "total_tokens": len(raw) // 4 + 7},
        }
        return web.Response(body=_dumps(out), content_type="application/json")

    app = web.Application()
    app.router.add_post("/v1/chat/completions", completions)
    return app


@contextmanager
def serve_in_thread(
    policy: Policy, latency_s: float = 0.0, faults: Faults | None = None
) -> Iterator[tuple[str, EndpointStats]]:
    """Yields (base URL ending in /v1, live stats). The server runs on its own loop in a daemon thread."""
    stats = EndpointStats()
    ready = threading.Event()
    box: dict[str, Any] = {}

    def run() -> None:
        loop = asyncio.new_event_loop()
        box["loop"] = loop
        runner = web.AppRunner(make_app(policy, latency_s, faults, stats), access_log=None)
        loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        loop.run_until_complete(site.start())
        box["port"] = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        box["runner"] = runner
        ready.set()
        loop.run_forever()
        loop.run_until_complete(runner.cleanup())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    if not ready.wait(120):  # generous: a loaded CI machine starts slowly; a dead thread never sets it
        raise RuntimeError("scripted chat endpoint did not start within 120 s")
    try:
        yield f"http://127.0.0.1:{box['port']}/v1", stats
    finally:
        box["loop"].call_soon_threadsafe(box["loop"].stop)
        thread.join(10)


def _serve_process(policy: Policy, latency_s: float, faults: Faults | None, port_q: Any) -> None:
    # A forked child inherits the test process's Python handlers; terminate() must simply end it.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)

    async def main() -> None:
        runner = web.AppRunner(make_app(policy, latency_s, faults), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
        await site.start()
        port_q.put(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]
        await asyncio.Event().wait()

    try:
        import uvloop

        uvloop.run(main())
    except ImportError:
        asyncio.run(main())


@contextmanager
def serve_in_process(policy: Policy, latency_s: float = 0.0, faults: Faults | None = None) -> Iterator[str]:
    """Like `serve_in_thread` but in a forked process, so the server does not share a CPU or GIL with the client."""
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    proc = ctx.Process(target=_serve_process, args=(policy, latency_s, faults, q), daemon=True)
    proc.start()
    try:
        port = q.get(timeout=120)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.join(10)
        if proc.is_alive():
            proc.kill()
            proc.join()
