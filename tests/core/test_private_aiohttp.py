"""aiohttp's private API (core/private_aiohttp.py) against the installed aiohttp: an upgrade that
renames or drops one fails here, naming it, before it fails in a trial."""

from __future__ import annotations

import asyncio

import psutil
from aiohttp import web

from ptbench.core import private_aiohttp


def test_bound_port_is_the_port_a_port_0_site_listens_on() -> None:
    async def scenario() -> tuple[int, set[int]]:
        runner = web.AppRunner(web.Application())
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        try:
            port = private_aiohttp.bound_port(site)
            return port, {c.laddr.port for c in psutil.Process().net_connections("tcp") if c.status == "LISTEN"}
        finally:
            await runner.cleanup()

    port, listening = asyncio.run(scenario())
    assert port > 0 and port in listening


def test_deferred_headers_switch_still_exists_and_is_what_web_response_uses() -> None:
    """The switch must exist on StreamResponse (on by default) and be the one aiohttp's own Response
    turns off: if aiohttp renames it, setting it would silently do nothing."""
    assert web.StreamResponse._send_headers_immediately is True  # type: ignore[attr-defined]
    assert web.Response._send_headers_immediately is False  # type: ignore[attr-defined]

    @private_aiohttp.defer_headers
    class Relayed(web.StreamResponse):
        pass

    assert Relayed._send_headers_immediately is False  # type: ignore[attr-defined]
    assert web.StreamResponse._send_headers_immediately is True  # type: ignore[attr-defined]


def test_deferred_headers_go_out_with_the_first_body_write() -> None:
    """Served for real: the client reads the headers and the first chunk; the transport saw one
    write for both (the switch does what it is used for), and two with the default."""
    writes: dict[str, int] = {}

    def handler_for(cls: type[web.StreamResponse], name: str):
        async def handler(request: web.Request) -> web.StreamResponse:
            transport = request.transport
            assert transport is not None
            original, count = transport.write, [0]

            def counting(data: bytes) -> None:
                count[0] += 1
                original(data)

            transport.write = counting  # type: ignore[method-assign]
            reply = cls()
            await reply.prepare(request)
            await reply.write(b"chunk")
            writes[name] = count[0]
            transport.write = original  # type: ignore[method-assign]
            await reply.write_eof()
            return reply

        return handler

    class Deferred(web.StreamResponse):
        pass

    private_aiohttp.defer_headers(Deferred)

    async def scenario() -> None:
        import aiohttp

        app = web.Application()
        app.router.add_get("/deferred", handler_for(Deferred, "deferred"))
        app.router.add_get("/default", handler_for(web.StreamResponse, "default"))
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        try:
            base = f"http://127.0.0.1:{private_aiohttp.bound_port(site)}"
            async with aiohttp.ClientSession() as session:
                for path in ("deferred", "default"):
                    async with session.get(f"{base}/{path}") as resp:
                        assert await resp.read() == b"chunk"
        finally:
            await runner.cleanup()

    asyncio.run(scenario())
    assert writes == {"deferred": 1, "default": 2}, writes
