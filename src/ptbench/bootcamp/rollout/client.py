"""A small async client for OpenAI-compatible chat completions, built for many concurrent episodes.

Why not the OpenAI SDK: at high concurrency its per-call CPU cost (re-validating the whole message
history, opening new connections) dominates. Here one keep-alive pool (`rollout.http`, a small
HTTP/1.1 client: aiohttp's was half a turn's CPU) is sized to the concurrency, request bodies are
serialised once, and responses are read as plain dicts.
Failures are classified; retryable ones are retried by the one policy of `ptbench.core.retry`
(exponential backoff with jitter, `Retry-After` honoured).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from ptbench.bootcamp.rollout.http import HttpPool, Response
from ptbench.core import fastjson
from ptbench.core.errors import UserError
from ptbench.core.retry import RetryPolicy, parse_retry_after, retryable_status


class ChatError(Exception):
    """A chat request that failed for good (after retries, or not retryable)."""

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        attempts: int = 1,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind, self.status, self.retryable, self.attempts = kind, status, retryable, attempts
        self.retry_after = retry_after
        self.retry_kinds: list[str] = []

    def as_record(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "message": str(self)[:500],
            "status": self.status,
            "retryable": self.retryable,
            "attempts": self.attempts,
        }


@dataclass
class ChatResult:
    message: dict[str, Any]
    finish_reason: str | None
    usage: dict[str, int]
    latency_s: float
    retries: list[str] = field(default_factory=list)


def chat_url(endpoint: str) -> str:
    base = endpoint.rstrip("/")
    if base.endswith("/chat/completions"):
        return base
    if not base.endswith("/v1"):
        base += "/v1"
    return base + "/chat/completions"


def classify_status(status: int, body: str) -> tuple[str, bool]:
    """(kind, retryable) for an HTTP error status; retryable as the one policy (`core.retry`) says."""
    retryable = retryable_status(status)
    if status == 429:
        return "rate_limited", retryable
    if status in (408, 409):
        return "timeout" if status == 408 else "conflict", retryable
    if status >= 500:
        return "server_error", retryable
    low = body.lower()
    if status == 400 and (
        "context length" in low
        or "maximum context" in low
        or "too long" in low
        or "max_tokens" in low
        and "exceed" in low
    ):
        return "context_length", False
    if status in (401, 403):
        return "auth", False
    if status == 404:
        return "not_found", False
    return "bad_request", False


class ChatClient:
    """Use as `async with ChatClient(...) as client: await client.chat(messages, tools)`."""

    def __init__(
        self,
        endpoint: str,
        model: str,
        *,
        api_key: str | None = None,
        concurrency: int = 64,
        timeout_s: float = 120.0,
        retry: RetryPolicy | None = None,
        sampling: dict[str, Any] | None = None,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        self.url = chat_url(endpoint)
        self.model = model
        self._headers = {"Content-Type": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self.concurrency = concurrency
        if not timeout_s > 0:
            raise UserError(f"request timeout {timeout_s:g} s: give more than 0 seconds (rollout --timeout)")
        self.timeout_s = timeout_s
        self.retry = retry or RetryPolicy()
        self.sampling = {k: v for k, v in (sampling or {}).items() if v is not None}
        # Passed through as top-level request fields, e.g. {"chat_template_kwargs": {"enable_thinking": false}}.
        self.extra_body = dict(extra_body or {})
        self._session: HttpPool | None = None
        self.stats: dict[str, int] = {"requests": 0, "retries": 0}

    async def __aenter__(self) -> ChatClient:
        try:
            self._session = HttpPool(self.url, self._headers, limit=self.concurrency, timeout_s=self.timeout_s)
        except ValueError as exc:
            raise UserError(f"endpoint: {exc} (give an OpenAI-compatible base URL, e.g. http://host:8000/v1)") from None
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self._session is not None:
            self._session.close()

    def _body(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> bytes:
        # Reasoning text stays in the trace but is not sent back: strict servers reject unknown
        # message fields, and reasoning templates drop earlier turns' thinking anyway.
        sendable = [
            {k: v for k, v in m.items() if k != "reasoning_content"} if "reasoning_content" in m else m
            for m in messages
        ]
        body: dict[str, Any] = {**self.extra_body, "model": self.model, "messages": sendable, **self.sampling}
        if tools:
            body["tools"] = tools
        return fastjson.dumps(body)

    async def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> ChatResult:
        """One completion, retried on retryable failures; raises `ChatError` when it cannot succeed."""
        session = self._session
        assert session is not None, "use the client as `async with ChatClient(...)`"
        data = self._body(messages, tools)
        retries: list[str] = []
        attempt = 0
        while True:
            attempt += 1
            self.stats["requests"] += 1
            start = time.perf_counter()
            # One request, read here and not in a coroutine of its own: every await level is paid on
            # each suspend and resume of the episode (docs/bootcamp.md, "Rollout throughput").
            try:
                resp = await session.post(data)  # the pool applies the timeout (one sweep, not a timer a call)
            except TimeoutError:
                err = ChatError("timeout", f"no response within {self.timeout_s:g} s", retryable=True)
            except OSError as exc:  # refused, reset, TLS, or a response that is not HTTP
                err = ChatError("connection", f"{type(exc).__name__}: {exc}", retryable=True)
            else:
                read = _read(resp)
                if not isinstance(read, ChatError):
                    read.latency_s = time.perf_counter() - start
                    read.retries = retries
                    return read
                err = read
            err.attempts = attempt
            err.retry_kinds = retries
            delay = self.retry.delay(attempt, err.retry_after) if err.retryable else None
            if delay is None:
                raise err
            retries.append(err.kind)
            self.stats["retries"] += 1
            await asyncio.sleep(delay)


def _read(resp: Response) -> ChatResult | ChatError:
    """The answer to one request: the completion, or the (classified) error it is."""
    raw = resp.body
    if resp.status != 200:
        text = raw[:2000].decode(errors="replace")
        kind, retryable = classify_status(resp.status, text)
        wait = parse_retry_after(resp.headers.get("retry-after")) if retryable else None
        return ChatError(
            kind, f"HTTP {resp.status}: {text[:300]}", status=resp.status, retryable=retryable, retry_after=wait
        )
    try:
        payload = fastjson.loads(raw)
        choice = payload["choices"][0]
        message = choice["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        return ChatError("bad_response", f"unreadable response: {raw[:200]!r}", status=200, retryable=True)
    usage = payload.get("usage") or {}
    return ChatResult(
        message=message,
        finish_reason=choice.get("finish_reason"),
        usage={
            "prompt_tokens": int(usage.get("prompt_tokens") or 0),
            "completion_tokens": int(usage.get("completion_tokens") or 0),
        },
        latency_s=0.0,
    )
