"""The scripted provider's HTTP server: routes every wire format, plays the script, records requests.

One server answers all four APIs on one port, so each CLI is pointed at the same base URL (with
`/v1` appended for the OpenAI-style clients). Every request is recorded, headers and bodies passed
through redaction of the credentials the clients sent.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import web

from ptbench.core.aioserve import serve_in_thread, start_catch_all
from ptbench.core.files import append_jsonl
from ptbench.testing.player import Player, RequestView
from ptbench.testing.script import Script
from ptbench.testing.wire import anthropic, chat, gemini, responses
from ptbench.testing.wire._common import WireResponse

REDACTED = "[REDACTED]"
_SECRET_HEADERS = {
    "authorization",
    "x-api-key",
    "x-goog-api-key",
    "api-key",
    "cookie",
    "proxy-authorization",
    "chatgpt-account-id",
}


class ScriptedProvider:
    """Plays `script` to whichever CLI calls; `requests` holds the redacted records, in order."""

    def __init__(self, script: Script, record_path: str | Path | None = None, secrets: tuple[str, ...] = ()) -> None:
        self.player = Player(script)
        self.record_path = Path(record_path) if record_path else None
        self.requests: list[dict[str, Any]] = []
        self._secrets = {s for s in secrets if len(s) >= 4}
        self._runner: web.AppRunner | None = None
        self.base_url = ""

    # ----- recording -------------------------------------------------------------------------
    def _learn_secrets(self, request: web.Request) -> None:
        for name, value in request.headers.items():
            if name.lower() in _SECRET_HEADERS:
                token = value.split(" ", 1)[1] if value.lower().startswith(("bearer ", "basic ")) else value
                if len(token) >= 4:
                    self._secrets.add(token)
        if "key" in request.query and len(request.query["key"]) >= 4:
            self._secrets.add(request.query["key"])

    def redact(self, text: str) -> str:
        for secret in sorted(self._secrets, key=len, reverse=True):
            text = text.replace(secret, REDACTED)
        return text

    def _record(
        self, request: web.Request, body: Any, api: str, reply: dict[str, Any] | None, view: RequestView | None
    ) -> None:
        headers = {k: (REDACTED if k.lower() in _SECRET_HEADERS else v) for k, v in request.headers.items()}
        record: dict[str, Any] = {
            "seq": len(self.requests),
            "time": time.time(),
            "method": request.method,
            "path": request.path,
            "query": dict(parse_qsl(request.query_string)),
            "headers": headers,
            "api": api,
            "body": body,
            "reply": reply,
        }
        if view is not None:
            record["tool_names"] = [t.name for t in view.tools]
            record["tool_outputs"] = view.tool_outputs
        record = json.loads(self.redact(json.dumps(record, default=str)))
        self.requests.append(record)
        if self.record_path is not None:
            append_jsonl(self.record_path, record)

    # ----- routing ---------------------------------------------------------------------------
    async def handle(self, request: web.Request) -> web.StreamResponse:
        self._learn_secrets(request)
        raw = await request.read()
        try:
            body: Any = json.loads(raw) if raw else {}
        except (json.JSONDecodeError, UnicodeDecodeError):
            body = {"_unparsed": raw[:2000].decode("utf-8", "replace")}
        path, method = request.path.rstrip("/"), request.method
        if method == "POST" and isinstance(body, dict):
            if path.endswith("/messages/count_tokens"):
                return await self._send(request, body, "anthropic.count_tokens", anthropic.count_tokens(body))
            if path.endswith("/messages"):
                return await self._play(request, body, anthropic.parse(body), anthropic)
            if path.endswith("/responses"):
                return await self._play(request, body, responses.parse(body), responses)
            if path.endswith("/chat/completions"):
                return await self._play(request, body, chat.parse(body), chat)
            if "/models/" in path and ":" in path:
                model, _, verb = path.rsplit("/", 1)[1].partition(":")
                if verb == "countTokens":
                    return await self._send(request, body, "gemini.count_tokens", gemini.count_tokens(body))
                if verb in ("generateContent", "streamGenerateContent"):
                    view = gemini.parse(body, model, stream=verb == "streamGenerateContent")
                    sse_stream = request.query.get("alt") == "sse"
                    return await self._play(request, body, view, gemini, sse_stream=sse_stream)
        if method in ("GET", "HEAD"):
            if path.endswith("/models") and "v1beta" in path:
                return await self._send(
                    request, body, "gemini.models", WireResponse(body={"models": [{"name": "models/scripted"}]})
                )
            if path.endswith("/models"):
                return await self._send(request, body, "openai.models", chat.models())
            return await self._send(request, body, "probe", WireResponse(body={}))
        return await self._send(
            request,
            body,
            "unknown",
            WireResponse(
                status=404,
                body={"error": {"message": f"scripted provider: no route for {method} {path}", "type": "not_found"}},
            ),
        )

    async def _play(
        self, request: web.Request, body: Any, view: RequestView, wire: Any, **kw: Any
    ) -> web.StreamResponse:
        reply = self.player.decide(view)
        if reply.delay_s:
            await asyncio.sleep(reply.delay_s)
        if reply.error is not None:
            out = wire.error(reply.error.kind, reply.error.message)
        else:
            out = wire.respond(reply, view, **kw)
        return await self._send(request, body, view.api, out, reply.summary(), view)

    async def _send(
        self,
        request: web.Request,
        body: Any,
        api: str,
        out: WireResponse,
        reply: dict[str, Any] | None = None,
        view: RequestView | None = None,
    ) -> web.StreamResponse:
        self._record(request, body, api, reply, view)
        if not out.streamed:
            return web.json_response(out.body, status=out.status)
        resp = web.StreamResponse(
            status=out.status, headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await resp.prepare(request)
        for frame in out.events:
            await resp.write(frame.encode())
        await resp.write_eof()
        return resp

    # ----- lifecycle -------------------------------------------------------------------------
    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        self._runner, self.base_url = await start_catch_all(self.handle, host, port)
        return self.base_url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None


@contextmanager
def provider_in_thread(
    script: Script, record_path: str | Path | None = None, secrets: tuple[str, ...] = ()
) -> Iterator[ScriptedProvider]:
    """Run a ScriptedProvider on a free port in a background thread; its `base_url` is set on entry."""
    provider = ScriptedProvider(script, record_path, secrets)
    with serve_in_thread(provider, name="scripted-provider"):
        yield provider
