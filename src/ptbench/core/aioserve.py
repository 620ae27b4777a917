"""Small HTTP servers the harness runs inside its own process: the per-trial LLM gateway and the
scripted model provider. One catch-all aiohttp app on a free loopback port, served from a
background thread so the caller's code stays synchronous."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from ptbench.core.private_aiohttp import bound_port


class AsyncServer(Protocol):
    async def start(self) -> Any: ...

    async def stop(self) -> None: ...


async def start_catch_all(
    handler: Callable[[Any], Awaitable[Any]], host: str = "127.0.0.1", port: int = 0, unix_path: str | None = None
) -> tuple[Any, str]:
    """Serve `handler` for every method and path (also on the Unix socket `unix_path`, if given);
    returns (the app runner to clean up, base URL)."""
    from aiohttp import web

    loop = asyncio.get_running_loop()

    def request(message, payload, protocol, writer, task):  # the low-level server: no router, no middlewares
        return web.BaseRequest(message, payload, protocol, writer, task, loop, client_max_size=256 * 1024 * 1024)

    # A reply held open (a slow stream, a scripted delay) must not hold up shutdown.
    runner = web.ServerRunner(web.Server(handler, request_factory=request, access_log=None), shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    if unix_path:
        await web.UnixSite(runner, unix_path).start()
    return runner, f"http://{host}:{bound_port(site)}"


@contextmanager
def serve_in_thread(
    server: AsyncServer, *, name: str, loop: asyncio.AbstractEventLoop | None = None, start_timeout_s: float = 30
) -> Iterator[None]:
    """Run `server.start()` on an event loop in a daemon thread, serve until the block ends, then
    `server.stop()`. A failure to start is raised here, in the caller's thread."""
    loop = loop or asyncio.new_event_loop()
    ready = threading.Event()
    failure: list[BaseException] = []

    def serve() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(server.start())
        except BaseException as exc:  # surfaced to the caller below
            failure.append(exc)
            ready.set()
            return
        ready.set()
        loop.run_forever()
        loop.run_until_complete(server.stop())
        loop.close()

    thread = threading.Thread(target=serve, name=name, daemon=True)
    thread.start()
    ready.wait(start_timeout_s)
    if failure:
        raise failure[0]
    try:
        yield
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
