"""The per-trial LLM gateway: the agent's only way to its model provider.

The runner starts one for an LLM agent's solve stage, outside the sandbox, on a free loopback
port. The agent's CLI gets the gateway's URL as its base URL and a random trial token as its "key";
the gateway checks the token, checks the model against the allow-list and the cost cap, swaps the
token for the real key and forwards the request unchanged (streams pass through as they arrive).
Every call is recorded in agent/calls.jsonl (no headers, error text redacted) with its model,
tokens, cost, latency and status, and, with a `Transcript`, its new messages and the model's
reply in record/transcript.jsonl (transcript.py). `/judge/...` is the same for the judge of the agent's own
`evaluate.sh`, with its own key and cap.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from ptbench.core.aioserve import start_catch_all
from ptbench.core.fastjson import ascii_line, loads
from ptbench.core.private_aiohttp import defer_headers
from ptbench.core.retry import RetryPolicy
from ptbench.gateway.prices import cost_usd, price_of
from ptbench.gateway.transcript import MAX_REPLY, Transcript
from ptbench.gateway.wire import (
    SseUsageScanner,
    Usage,
    add_usage,
    api_of,
    error_body,
    gemini_model,
)

# Where each CLI puts its key; whichever carried the trial token gets the real key.
_KEY_HEADERS = ("x-api-key", "authorization", "x-goog-api-key", "api-key")
_DROP_REQUEST = {
    "host",
    "content-length",
    "connection",
    "transfer-encoding",
    "accept-encoding",
    "keep-alive",
    "proxy-authorization",
    "cookie",
    *_KEY_HEADERS,
}
_DROP_REPLY = {"content-length", "content-encoding", "transfer-encoding", "connection", "keep-alive", "set-cookie"}
# Four retries, 1 s doubling; a provider asking for more than a minute gets its reply relayed instead.
GATEWAY_RETRY = RetryPolicy(max_retries=4, base_s=1.0, max_backoff_s=60.0, max_retry_after_s=60.0)
_PRICED = {"anthropic", "responses", "chat", "gemini"}
# Only what the CLIs need: no files, batches, fine-tuning or other paid API a key would open.
ALLOWED_APIS = _PRICED | {"anthropic.count_tokens", "gemini.countTokens", "models"}
COST_CAP_MARK = "ptbench_cost_cap"
# The route of a judged task's judge (Arena, HealthBench: the agent's own evaluate.sh calls it under
# /judge/): the gateway's route, not the integrity check that shares the word.
JUDGE_ROUTE = "judge"
READ_STALL_S = 900.0  # a provider silent this long (before its headers, or mid-stream) is given up on
STALL_CHECK_S = 5.0  # in the refusal the CLI shows, and in calls.jsonl


@dataclass
class Upstream:
    """One real provider the gateway forwards to."""

    name: str  # "agent" or "judge"
    base_url: str  # the provider's base URL as the CLI would have used it; the request path is appended
    key: str
    models: dict[str, str] = field(default_factory=dict)  # allowed name -> name sent upstream; {} = any model
    cost_cap_usd: float | None = None
    spent_usd: float = 0.0
    cap_hit: bool = False
    calls: int = 0
    usage: Usage = field(default_factory=Usage)


@defer_headers
class _RelayedResponse(web.StreamResponse):
    """The reply to the agent: its headers go out with the first piece of the body, in one write
    instead of a write of their own (core/private_aiohttp.py)."""


class Gateway:
    def __init__(
        self,
        token: str,
        agent: Upstream,
        *,
        judge: Upstream | None = None,
        calls_path: str | Path | None = None,
        redact: Callable[[str], str] = lambda s: s,
        retry: RetryPolicy = GATEWAY_RETRY,
        on_cap: Callable[[Upstream], None] = lambda u: None,
        read_stall_s: float = READ_STALL_S,
        transcript: Transcript | None = None,
    ) -> None:
        self.token = token
        self.routes = {"agent": agent, **({JUDGE_ROUTE: judge} if judge else {})}
        self.calls_path = Path(calls_path) if calls_path else None
        self.redact = redact
        self.retry = retry
        self.on_cap = on_cap
        self.read_stall_s = read_stall_s
        self.transcript = transcript
        self._session: aiohttp.ClientSession | None = None
        self._runner: web.AppRunner | None = None
        self._calls_fd: int | None = None
        self._streams: dict[aiohttp.ClientResponse, list[float]] = {}  # reply -> [bytes seen, when they last grew]
        self._stall_task: asyncio.Task | None = None
        self.base_url = ""

    # ----- checks ------------------------------------------------------------------------------
    def _token_place(self, request: web.Request) -> str | None:
        """Which header (or `?key=`) carried the trial token; None if none did."""
        for name in _KEY_HEADERS:
            value = request.headers.get(name)
            if value:
                given = value.split(" ", 1)[1] if name == "authorization" and " " in value else value
                if hmac.compare_digest(given.encode(), self.token.encode()):
                    return name
        key = request.query.get("key") if request.query_string else None
        if key and hmac.compare_digest(key.encode(), self.token.encode()):
            return "query"
        return None

    def _refuse(self, api: str, status: int, message: str) -> web.Response:
        return web.json_response(error_body(api, status, message), status=status)

    # ----- one call ----------------------------------------------------------------------------
    async def handle(self, request: web.Request) -> web.StreamResponse:
        started = time.perf_counter()
        path = request.path
        route = "agent"
        if path.startswith(f"/{JUDGE_ROUTE}/") and JUDGE_ROUTE in self.routes:
            route, path = JUDGE_ROUTE, path[len(JUDGE_ROUTE) + 1 :]
        up = self.routes[route]
        api = api_of(request.method, path)
        place = self._token_place(request)
        if place is None:
            self._record(up, api, "", 401, started, refused="no trial token")
            return self._refuse(
                api, 401, "ptbench gateway: invalid API key (this endpoint takes only the trial's token)"
            )
        if api not in ALLOWED_APIS:
            self._record(up, api, "", 403, started, refused="route not allowed")
            return self._refuse(api, 403, f"ptbench gateway: {request.method} {path} is not an API this trial may use")
        raw = await request.read()
        body: Any = None
        model = ""
        if api.startswith("gemini"):
            model = gemini_model(path)
        elif request.method == "POST" and raw:
            try:
                body = loads(raw)
            except ValueError:
                return self._refuse(api, 400, "ptbench gateway: the request body is not JSON")
            model = str(body.get("model", "")) if isinstance(body, dict) else ""
        if request.method == "POST" and up.models and model not in up.models:
            self._record(up, api, model, 403, started, refused="model not allowed")
            allowed = ", ".join(sorted(up.models))
            return self._refuse(
                api, 403, f"ptbench gateway: model '{model}' is not allowed in this trial (allowed: {allowed})"
            )
        if request.method == "POST" and up.cost_cap_usd is not None and up.spent_usd >= up.cost_cap_usd:
            first = not up.cap_hit
            up.cap_hit = True
            self._record(up, api, model, 403, started, refused=COST_CAP_MARK)
            if first:
                self.on_cap(up)
            return self._refuse(
                api,
                403,
                f"ptbench gateway ({COST_CAP_MARK}): this trial's {up.name} cost cap of "
                f"${up.cost_cap_usd:g} is spent (${up.spent_usd:.4f} used); no further model calls are allowed",
            )
        sent_model = up.models.get(model, model) if model else model
        if sent_model != model:  # an alias (e.g. OpenCode's provider-less name): the upstream gets its own name
            if api.startswith("gemini"):
                path = path.replace(f"/{model}:", f"/{sent_model}:", 1)
            elif isinstance(body, dict):
                raw = json.dumps(
                    {**json.loads(raw), "model": sent_model}
                ).encode()  # the stdlib's parse: orjson's turns a big integer into a float
        call = 0
        if self.transcript is not None:
            call = self.transcript.new_call()
            self.transcript.request(call, up.name, api, model, raw, body)
        return await self._forward(request, up, api, model, path, place, raw, started, call)

    async def _forward(
        self,
        request: web.Request,
        up: Upstream,
        api: str,
        model: str,
        path: str,
        place: str,
        raw: bytes,
        started: float,
        call: int = 0,
    ) -> web.StreamResponse:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _DROP_REQUEST}
        query = [(k, v) for k, v in request.query.items() if k != "key"] if request.query_string else []
        if place == "query":
            query.append(("key", up.key))
        elif place == "authorization":
            headers["Authorization"] = f"Bearer {up.key}"
        else:
            headers[place] = up.key
        url = up.base_url.rstrip("/") + path
        assert self._session is not None
        attempts = 0
        while True:
            attempts += 1
            try:
                reply = await self._session.request(
                    request.method, url, params=query or None, headers=headers, data=raw or None
                )
            except (TimeoutError, aiohttp.ClientError) as exc:
                wait = self.retry.delay(attempts)
                if wait is not None:
                    await asyncio.sleep(wait)
                    continue
                self._record(up, api, model, 502, started, attempts=attempts, error=f"{type(exc).__name__}: {exc}")
                return self._refuse(
                    api, 502, f"ptbench gateway: the provider could not be reached ({type(exc).__name__})"
                )
            if reply.status != 200:
                wait = self.retry.delay_for_reply(attempts, reply.status, reply.headers.get("Retry-After"))
                if wait is not None:  # else the reply (with its Retry-After) goes to the agent as it is
                    reply.release()
                    await asyncio.sleep(wait)
                    continue
            break
        return await self._relay(request, reply, up, api, model, started, attempts, call)

    async def _relay(
        self,
        request: web.Request,
        reply: aiohttp.ClientResponse,
        up: Upstream,
        api: str,
        model: str,
        started: float,
        attempts: int,
        call: int = 0,
    ) -> web.StreamResponse:
        out = _RelayedResponse(
            status=reply.status, headers={k: v for k, v in reply.headers.items() if k.lower() not in _DROP_REPLY}
        )
        sse = reply.headers.get("Content-Type", "").startswith("text/event-stream")
        scanner = SseUsageScanner(api) if sse else None
        kept = bytearray()  # a JSON reply (or an error) is read for usage / the message; capped
        record = self.transcript is not None and call > 0
        streamed: list[bytes] = []  # an SSE reply, for the transcript
        streamed_bytes = 0
        status = reply.status
        first_byte = None
        # The reply's body is watched for stalls by _watch_stalls, not by a read timer that
        # aiohttp would re-arm on every segment of the stream.
        if reply.connection is not None and reply.connection.protocol is not None:
            reply.connection.protocol.read_timeout = None
        self._streams[reply] = [-1, time.monotonic()]
        try:
            await out.prepare(request)
            content = reply.content
            # readany() hands over all that has arrived (not one SSE event at a time). The last
            # piece, when the upstream's end of body came with it, goes out with our own end of
            # body in one write.
            chunk = await content.readany()
            if chunk:
                first_byte = time.perf_counter() - started
            while chunk:
                if scanner is not None:
                    scanner.feed(chunk)
                    if record and streamed_bytes < MAX_REPLY:
                        streamed.append(chunk)
                        streamed_bytes += len(chunk)
                elif len(kept) < 16 * 1024 * 1024:
                    kept += chunk
                if content.at_eof():
                    break
                await out.write(chunk)
                chunk = await content.readany()
            await out.write_eof(chunk)
        except (ConnectionResetError, aiohttp.ClientError, asyncio.CancelledError) as exc:
            status = status if isinstance(exc, asyncio.CancelledError) else -1
            raise
        finally:
            self._streams.pop(reply, None)
            reply.release()
            usage = Usage()
            if scanner is not None:
                scanner.close()
                usage = scanner.usage
            elif kept and api in _PRICED:
                try:
                    parsed = json.loads(bytes(kept))
                    for item in (
                        parsed if isinstance(parsed, list) else [parsed]
                    ):  # Gemini streams a JSON array without alt=sse
                        add_usage(api, item, usage)
                except ValueError:
                    pass
            error = bytes(kept[:600]).decode("utf-8", "replace") if reply.status >= 400 else None
            if record:
                assert self.transcript is not None
                body, cut = (streamed, streamed_bytes >= MAX_REPLY) if sse else (bytes(kept), len(kept) >= 16 << 20)
                self.transcript.response(call, up.name, api, status, sse, body, cut)
            self._record(
                up,
                api,
                model,
                status,
                started,
                usage=usage,
                stream=sse,
                attempts=attempts,
                error=error,
                first_byte_s=first_byte,
            )
        return out

    # ----- records -----------------------------------------------------------------------------
    def _record(
        self,
        up: Upstream,
        api: str,
        model: str,
        status: int,
        started: float,
        *,
        usage: Usage | None = None,
        stream: bool = False,
        attempts: int = 0,
        refused: str | None = None,
        error: str | None = None,
        first_byte_s: float | None = None,
    ) -> None:
        usage = usage or Usage()
        cost = cost_usd(model, usage) if api in _PRICED and usage.seen else 0.0
        up.spent_usd += cost
        up.calls += 1
        total = up.usage
        total.input += usage.input
        total.output += usage.output
        total.cache_read += usage.cache_read
        total.cache_write += usage.cache_write
        rec: dict[str, Any] = {
            "time": time.time(),
            "route": up.name,
            "api": api or "other",
            "model": model,
            "status": status,
            "stream": stream,
            "latency_s": round(time.perf_counter() - started, 4),
            **usage.to_json(),
            "usage_reported": usage.seen,
            "cost_usd": round(cost, 6),
            "price": price_of(model)[0] if model else None,
            "spent_usd": round(up.spent_usd, 6),
        }
        if first_byte_s is not None:
            rec["first_byte_s"] = round(first_byte_s, 4)
        if attempts > 1:
            rec["attempts"] = attempts
        if refused:
            rec["refused"] = refused
        if error:
            rec["error"] = self.redact(error)
        if self.calls_path is not None:
            if self._calls_fd is None:
                self._calls_fd = os.open(self.calls_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            os.write(self._calls_fd, ascii_line(rec))  # one write(2) a line: never torn by a reader

    async def _watch_stalls(self) -> None:
        """End a reply whose body has not grown for `read_stall_s` (what sock_read does for the headers)."""
        while True:
            await asyncio.sleep(min(STALL_CHECK_S, self.read_stall_s / 4))
            now = time.monotonic()
            for reply, seen in list(self._streams.items()):
                total = reply.content.total_bytes
                if total != seen[0]:
                    seen[0], seen[1] = total, now
                elif now - seen[1] > self.read_stall_s:
                    reply.content.set_exception(
                        aiohttp.ServerTimeoutError(f"no data from the provider for {self.read_stall_s:g} s")
                    )
                    reply.close()

    # ----- lifecycle ---------------------------------------------------------------------------
    async def start(self, host: str = "127.0.0.1", port: int = 0, unix_path: str | None = None) -> str:
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=self.read_stall_s)
        self._session = aiohttp.ClientSession(
            timeout=timeout,
            connector=aiohttp.TCPConnector(limit=256),
            auto_decompress=True,
            skip_auto_headers=("User-Agent",),
            # no cookies kept from one provider reply for the next call (nor the judge's)
            cookie_jar=aiohttp.DummyCookieJar(),
        )
        self._stall_task = asyncio.get_running_loop().create_task(self._watch_stalls())
        self._runner, self.base_url = await start_catch_all(self.handle, host, port, unix_path)
        return self.base_url

    async def stop(self) -> None:
        if self._stall_task is not None:
            self._stall_task.cancel()
            self._stall_task = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._session is not None:
            await self._session.close()
            self._session = None
        if self._calls_fd is not None:
            os.close(self._calls_fd)
            self._calls_fd = None
        if self.transcript is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.transcript.close)

    def serves(self, route: str) -> bool:
        """Whether this gateway has the route ("agent" always; "judge" for a judged task)."""
        return route in self.routes

    def totals(self) -> dict[str, Any]:
        return {
            name: {
                "calls": u.calls,
                "cost_usd": round(u.spent_usd, 6),
                "cost_cap_usd": u.cost_cap_usd,
                "cap_hit": u.cap_hit,
                **u.usage.to_json(),
            }
            for name, u in self.routes.items()
        }
