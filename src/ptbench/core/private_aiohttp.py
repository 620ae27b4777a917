"""aiohttp's private API, every use of it here and nowhere else (tests/core/test_private_aiohttp.py
checks each against the installed aiohttp, so an upgrade that moves one fails there, loudly).

  bound_port          TCPSite._server                         the port a port=0 site listens on
  DeferredHeaders     StreamResponse._send_headers_immediately headers sent with the first body write

aiohttp is imported inside the functions: core must stay cheap to import.
"""

from __future__ import annotations

from typing import Any


def bound_port(site: Any) -> int:
    """The TCP port an aiohttp `web.TCPSite` listens on (started with port=0: the kernel chose it).
    aiohttp has no public getter for a site's sockets."""
    server = site._server
    if server is None or not server.sockets:
        raise RuntimeError("aiohttp site is not started (no listening socket)")
    return int(server.sockets[0].getsockname()[1])


def defer_headers(response_class: type) -> type:
    """`response_class` (a `web.StreamResponse` subclass) sends its headers with the first piece of
    the body, in one write instead of a write of their own, as aiohttp's own `web.Response` does.
    aiohttp has no public switch for a streamed reply; an aiohttp without this private one sends
    them at once, as before (slower, not wrong)."""
    response_class._send_headers_immediately = False  # type: ignore[attr-defined]
    return response_class
