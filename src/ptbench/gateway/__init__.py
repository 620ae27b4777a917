"""The per-trial LLM gateway (see server.py): the agent holds a trial token, never a real key."""

from __future__ import annotations

import asyncio
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ptbench.gateway.server import COST_CAP_MARK, Gateway, Upstream

TOKEN_PREFIX = "ptb-trial-"


def new_trial_token() -> str:
    """A random token that only this trial's gateway accepts (worthless anywhere else)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(24)


def new_event_loop() -> asyncio.AbstractEventLoop:
    """uvloop where installed (about a third less CPU per proxied call), else asyncio's own loop."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


@contextmanager
def gateway_in_thread(gateway: Gateway, host: str = "127.0.0.1") -> Iterator[Gateway]:
    """Serve `gateway` on a free loopback port from a background thread of this process."""
    loop = new_event_loop()
    ready = threading.Event()
    failure: list[BaseException] = []

    def serve() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(gateway.start(host))
        except BaseException as exc:  # surfaced to the caller below
            failure.append(exc)
            ready.set()
            return
        ready.set()
        loop.run_forever()
        loop.run_until_complete(gateway.stop())
        loop.close()

    thread = threading.Thread(target=serve, name="llm-gateway", daemon=True)
    thread.start()
    ready.wait(30)
    if failure:
        raise failure[0]
    try:
        yield gateway
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)


__all__ = ["COST_CAP_MARK", "TOKEN_PREFIX", "Gateway", "Upstream", "gateway_in_thread", "new_trial_token"]
