"""The per-trial LLM gateway (see server.py): the agent holds a trial token, never a real key."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Iterator
from contextlib import contextmanager

from ptbench.core.aioserve import serve_in_thread
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
def gateway_in_thread(gateway: Gateway, host: str = "127.0.0.1", unix_path: str | None = None) -> Iterator[Gateway]:
    """Serve `gateway` on a free loopback port (and the Unix socket `unix_path`, for a sandbox
    without a network) from a background thread of this process."""

    class _OnHost:  # start() on the chosen host
        async def start(self) -> str:
            return await gateway.start(host, unix_path=unix_path)

        async def stop(self) -> None:
            await gateway.stop()

    with serve_in_thread(_OnHost(), name="llm-gateway", loop=new_event_loop()):
        yield gateway


__all__ = ["COST_CAP_MARK", "TOKEN_PREFIX", "Gateway", "Upstream", "gateway_in_thread", "new_trial_token"]
