"""The rollout client's HTTP/1.1: keep-alive connections to one endpoint, one POST at a time on each.

Why not aiohttp's client here: a model turn is one small POST and one JSON answer, and aiohttp's
general machinery (request and response objects, cookie jar, tracing hooks, stream readers, a
payload writer) cost about twice what the rest of a turn does (profile in docs/bootcamp.md,
"Rollout throughput"). This does only what a chat-completions call needs: `http` and `https`,
a `Content-Length` or chunked answer (or one that ends with the connection), gzip/deflate bodies,
`Connection: close`. Proxies are not used (aiohttp's default too: it ignores the proxy
environment). Every failure to talk to the server is an `OSError`; a timeout is `TimeoutError`.

A request's deadline is not a timer of its own (`asyncio.timeout` cost about 6 us a call, a uvloop
timer 2 us, against a whole turn's 100): one sweep per tick (a tenth of the timeout, at most 1 s)
fails every request past its deadline, so a timeout fires between the limit and a tick after it.
"""

from __future__ import annotations

import asyncio
import ssl
import time
import zlib
from collections import deque
from dataclasses import dataclass
from urllib.parse import urlsplit


class ProtocolError(OSError):
    """The server's bytes are not an HTTP/1.1 response we can read, or it went away mid-answer."""


@dataclass(slots=True)
class Response:
    status: int
    headers: dict[str, str]
    """Lower-case names; a repeated header keeps its last value."""
    body: bytes


_MAX_HEAD = 64 * 1024


class _Connection(asyncio.Protocol):
    """One TCP (or TLS) connection; at most one request in flight on it."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.deadline = 0.0
        """`time.monotonic()` at which the request in flight (if any) times out (HttpPool's sweep)."""
        self._buf = bytearray()
        self._waiter: asyncio.Future[Response] | None = None
        self._loop = asyncio.get_running_loop()
        self._reset()

    def _reset(self) -> None:
        self._head: tuple[int, dict[str, str]] | None = None
        self._length: int | None = None  # body bytes expected (Content-Length)
        self._chunked = False
        self._chunks: list[bytes] = []
        self._until_eof = False

    # asyncio callbacks ----------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self._waiter is None:  # bytes nobody asked for: the connection is not reusable
            self._buf += data
            self.close()
            return
        try:
            if self._head is None and not self._buf:
                # The usual answer: its head (and often all of its body) in this one read, taken from
                # `data` itself rather than through the buffer; anything else goes on as `_parse` reads it.
                end = data.find(b"\r\n\r\n")
                if end >= 0:
                    self._read_head(data[:end].decode("latin-1"))
                    data = data[end + 4 :]
                    if self._length is not None and len(data) == self._length:
                        self._finish(data)
                        return
            self._buf += data
            self._parse()
        except ProtocolError as exc:
            self._fail(exc)

    def eof_received(self) -> bool:
        if self._waiter is not None and self._head is not None and self._until_eof:
            self._finish(bytes(self._buf))
        return False  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self._waiter is not None and not self._waiter.done():
            if self._head is not None and self._until_eof:
                self._finish(bytes(self._buf))
            else:
                self._fail(ProtocolError(f"server closed the connection mid-response ({exc or 'EOF'})"))

    # requests -------------------------------------------------------------------------------------
    def request(self, head: bytes, body: bytes, deadline: float) -> asyncio.Future[Response]:
        assert self.transport is not None and self._waiter is None
        self._waiter = waiter = self._loop.create_future()
        self.deadline = deadline
        self._buf.clear()
        self._reset()
        self.transport.writelines((head, body))
        return waiter

    def expire(self) -> None:
        """The request in flight is past its deadline: it fails with TimeoutError, the connection closes."""
        waiter, self._waiter = self._waiter, None
        self.close()
        if waiter is not None and not waiter.done():
            waiter.set_exception(TimeoutError())

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    def _fail(self, exc: Exception) -> None:
        waiter, self._waiter = self._waiter, None
        self.close()
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)

    def _finish(self, body: bytes, *, reusable: bool = True) -> None:
        assert self._head is not None
        status, headers = self._head
        waiter, self._waiter = self._waiter, None
        if not reusable or self._until_eof or headers.get("connection", "").lower() == "close":
            self.close()
        encoding = headers.get("content-encoding")  # None, the usual answer: the body as it came
        if encoding is not None:
            encoding = encoding.lower()
            if encoding in ("gzip", "deflate", "x-gzip"):
                try:  # wbits 47: zlib or gzip framing, whichever the header says
                    body = zlib.decompress(body, 47) if encoding != "deflate" else _inflate(body)
                except zlib.error as exc:
                    self.close()
                    if waiter is not None and not waiter.done():
                        waiter.set_exception(ProtocolError(f"undecodable {encoding} body: {exc}"))
                    return
            elif encoding != "identity":
                self.close()
                if waiter is not None and not waiter.done():
                    waiter.set_exception(ProtocolError(f"unsupported Content-Encoding {encoding!r}"))
                return
        if waiter is not None and not waiter.done():
            waiter.set_result(Response(status, headers, body))

    def _parse(self) -> None:
        buf = self._buf
        while self._head is None:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                if len(buf) > _MAX_HEAD:
                    raise ProtocolError("response head longer than 64 KiB")
                return
            text = buf[:end].decode("latin-1")
            del buf[: end + 4]
            self._read_head(text)
        if self._length is not None:
            if len(buf) >= self._length:
                if len(buf) > self._length:  # more than the answer: do not trust the connection again
                    self._finish(bytes(buf[: self._length]), reusable=False)
                else:
                    self._finish(bytes(buf))
        elif self._chunked:
            self._parse_chunks()

    def _read_head(self, text: str) -> None:
        """One response head (without its blank line): the status and headers, and how the body is
        framed; a 1xx head (100 Continue and friends) is skipped, the real head follows it."""
        status_line, _, fields = text.partition("\r\n")
        status = _status(status_line)
        if 100 <= status < 200:
            return
        headers: dict[str, str] = {}
        cache = _FIELDS
        for line in fields.split("\r\n") if fields else ():
            field = cache.get(line)
            if field is None:
                field = _field(line)
            headers[field[0]] = field[1]
        self._head = (status, headers)
        if "chunked" in headers.get("transfer-encoding", "").lower():
            self._chunked = True
        elif "content-length" in headers:
            try:
                self._length = int(headers["content-length"])
            except ValueError:
                raise ProtocolError(f"bad Content-Length {headers['content-length']!r}") from None
            if self._length < 0:
                raise ProtocolError(f"bad Content-Length {self._length}")
        elif status in (204, 304):
            self._length = 0
        else:
            self._until_eof = True

    def _parse_chunks(self) -> None:
        buf = self._buf
        while True:
            eol = buf.find(b"\r\n")
            if eol < 0:
                return
            size_text = bytes(buf[:eol]).split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise ProtocolError(f"bad chunk size {size_text[:20]!r}") from None
            if size == 0:
                end = buf.find(b"\r\n\r\n", eol)  # trailers (usually none), then the blank line
                if end < 0:
                    return
                extra = len(buf) > end + 4
                self._finish(b"".join(self._chunks), reusable=not extra)
                return
            if len(buf) < eol + 2 + size + 2:
                return
            self._chunks.append(bytes(buf[eol + 2 : eol + 2 + size]))
            del buf[: eol + 2 + size + 2]


_FIELDS: dict[str, tuple[str, str]] = {}
"""Header lines already read, as (lower-case name, value): a server sends the same few lines again and
again (its name, the content type, the length of similar answers, the date of this second), and one
lookup costs less than splitting, stripping and lowering each (docs/bootcamp.md, "Rollout
throughput"). Cleared when it holds 1,024 lines, so it stays small whatever a server sends."""
_STATUS: dict[str, int] = {}
"""Status lines already read, and their codes (cleared like _FIELDS)."""


def _field(line: str) -> tuple[str, str]:
    name, sep, value = line.partition(":")
    if not sep:
        raise ProtocolError(f"malformed header line: {line[:100]!r}")
    field = (name.strip().lower(), value.strip())
    if len(_FIELDS) >= 1024:
        _FIELDS.clear()
    _FIELDS[line] = field
    return field


def _status(status_line: str) -> int:
    status = _STATUS.get(status_line)
    if status is not None:
        return status
    version, _, rest = status_line.partition(" ")
    code = rest[:3]
    if not version.startswith("HTTP/1.") or not code.isdecimal() or rest[3:4] not in ("", " "):
        raise ProtocolError(f"not an HTTP/1.x status line: {status_line[:100]!r}")
    status = int(code)
    if len(_STATUS) >= 1024:
        _STATUS.clear()
    _STATUS[status_line] = status
    return status


def _inflate(body: bytes) -> bytes:
    try:  # "deflate" is meant to be zlib-wrapped; some servers send it raw
        return zlib.decompress(body)
    except zlib.error:
        return zlib.decompress(body, -15)


class HttpPool:
    """Keep-alive connections to one origin, at most `limit` open; `post` is one request on one of
    them, failing with TimeoutError when it has not been answered within `timeout_s` in all (waiting
    for a free connection and connecting included)."""

    def __init__(self, url: str, headers: dict[str, str], *, limit: int, timeout_s: float) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{url!r}: not an http(s) URL")
        self._host = parts.hostname
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._ssl = ssl.create_default_context() if parts.scheme == "https" else None
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        netloc = parts.netloc.rpartition("@")[2]  # never send credentials from the URL as a Host
        fixed = {
            "Host": netloc,
            "Accept": "*/*",
            "Accept-Encoding": "gzip, deflate",
            "User-Agent": "ptbench-rollout",
            **headers,
        }
        self._head_prefix = f"POST {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fixed.items())
        self.timeout_s = timeout_s
        self._tick = min(timeout_s / 10, 1.0)
        self._idle: list[_Connection] = []
        self._free = limit  # slots: connections that may still be used (open or to be opened)
        self._queue: deque[asyncio.Future[None]] = deque()  # posts waiting for a slot, first come first
        self._in_flight: set[_Connection] = set()
        self._sweeping = False
        self.opened = 0
        """Connections opened so far (a benchmark's check that keep-alive works)."""

    async def post(self, body: bytes) -> Response:
        # time.monotonic, not loop.time(): the same clock (asyncio's) without asking for the running
        # loop, which on Python 3.11 is a getpid() system call each time
        deadline = time.monotonic() + self.timeout_s
        head = f"{self._head_prefix}Content-Length: {len(body)}\r\n\r\n".encode("latin-1")
        conn = self._take_idle()
        if conn is None:  # no free slot or no idle connection: wait for one, or connect, within the deadline
            async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
                conn = await self._acquire()
        try:
            waiter = conn.request(head, body, deadline)
            self._in_flight.add(conn)
            if not self._sweeping:
                self._sweeping = True
                asyncio.get_running_loop().call_later(self._tick, self._sweep)
            resp = await waiter
        except BaseException:  # a timeout or cancel mid-answer leaves the connection unusable
            conn.close()
            raise
        finally:
            self._in_flight.discard(conn)
            self._give_back(conn)
        return resp

    def _take_idle(self) -> _Connection | None:
        """A slot and an open idle connection if both are there without waiting (the hot path), else
        None, having taken nothing."""
        if self._free <= 0 or self._queue:
            return None
        while self._idle:
            conn = self._idle.pop()
            if not conn.closed:
                self._free -= 1
                return conn
        return None

    async def _acquire(self) -> _Connection:
        """A slot (waiting for one, in turn) and a connection for it: an idle one, or a new one."""
        if self._free > 0 and not self._queue:
            self._free -= 1
        else:
            slot = asyncio.get_running_loop().create_future()
            self._queue.append(slot)
            try:
                await slot  # _release hands its slot over: `_free` is not raised for it
            except BaseException:
                if slot.done() and not slot.cancelled():  # handed a slot, then cancelled: pass it on
                    self._release()
                raise
        try:
            while self._idle:
                conn = self._idle.pop()
                if not conn.closed:
                    return conn
            return await self._open()
        except BaseException:
            self._release()
            raise

    def _give_back(self, conn: _Connection) -> None:
        if not conn.closed:
            self._idle.append(conn)
        self._release()

    def _release(self) -> None:
        while self._queue:
            slot = self._queue.popleft()
            if not slot.done():
                slot.set_result(None)
                return
        self._free += 1

    def _sweep(self) -> None:
        now = time.monotonic()
        for conn in [c for c in self._in_flight if c.deadline <= now]:
            conn.expire()
        if self._in_flight:
            asyncio.get_running_loop().call_later(self._tick, self._sweep)
        else:
            self._sweeping = False

    async def _open(self) -> _Connection:
        loop = asyncio.get_running_loop()
        _, conn = await loop.create_connection(
            _Connection, self._host, self._port, ssl=self._ssl, server_hostname=self._host if self._ssl else None
        )
        self.opened += 1
        return conn

    def close(self) -> None:
        for conn in self._idle:
            conn.close()
        self._idle.clear()
