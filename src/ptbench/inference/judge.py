"""An OpenAI-compatible chat-completions client for LLM judges.

- at most `concurrency` requests in flight;
- retries by the one policy of `ptbench.core.retry` (retryable statuses, backoff, `Retry-After`);
- an on-disk cache keyed by (base URL, judge model, request): re-evaluating pays nothing twice.
  The runner keeps it in the harness-only evaluation cache (PTBENCH_EVAL_CACHE/judge), outside
  the agent's workspace and HOME, so an agent cannot plant verdicts for its own answers;
- every request ends as a `JudgeReply` with text or an error — never an exception — so the caller
  can count failures and refuse to score past its threshold.

The API key is read from the environment variable named by `api_key_env` at request time and is
never stored, logged or written into the cache or the metrics.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ptbench.core.errors import UserError
from ptbench.core.retry import RetryPolicy, parse_retry_after, retryable_status

# Set in an agent's environment by the trial's gateway (launch/trial_gateway.py): its judge route and token.
JUDGE_GATEWAY_ENV = "PTBENCH_JUDGE_GATEWAY"
JUDGE_TOKEN_ENV = "PTBENCH_JUDGE_TOKEN"


@dataclass(frozen=True)
class JudgeConfig:
    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = 16
    max_retries: int = 6
    timeout_s: float = 300.0
    backoff_s: float = 1.0
    max_backoff_s: float = 60.0
    temperature: float | None = None  # None: the server's default (reasoning judges refuse others)
    max_tokens: int | None = None
    reasoning_effort: str | None = None  # e.g. "medium" for gpt-5-mini, as the reference protocol uses
    cache_dir: str | None = None

    @classmethod
    def from_options(cls, options: dict[str, Any], *, default_model: str) -> JudgeConfig:
        """Task options `judge_base_url`, `judge_model`, `judge_api_key_env`, `judge_concurrency`,
        `judge_cache_dir`, ... override the environment (PTBENCH_JUDGE_BASE_URL, PTBENCH_JUDGE_MODEL,
        PTBENCH_JUDGE_API_KEY_ENV, PTBENCH_JUDGE_CACHE)."""
        base_url = (
            options.get("judge_base_url") or os.environ.get("PTBENCH_JUDGE_BASE_URL") or "https://api.openai.com/v1"
        )
        kwargs: dict[str, Any] = {
            "base_url": base_url.rstrip("/"),
            "model": options.get("judge_model") or os.environ.get("PTBENCH_JUDGE_MODEL") or default_model,
            "api_key_env": options.get("judge_api_key_env")
            or os.environ.get("PTBENCH_JUDGE_API_KEY_ENV")
            or "OPENAI_API_KEY",
            "cache_dir": options.get("judge_cache_dir")
            or os.environ.get("PTBENCH_JUDGE_CACHE")
            or _eval_cache_judge_dir(),
        }
        for name in (
            "concurrency",
            "max_retries",
            "timeout_s",
            "backoff_s",
            "max_backoff_s",
            "temperature",
            "max_tokens",
            "reasoning_effort",
        ):
            if f"judge_{name}" in options:
                kwargs[name] = options[f"judge_{name}"]
        if os.environ.get(JUDGE_GATEWAY_ENV):
            # Inside a trial (the agent's own evaluate.sh): the judge is reached only through the
            # trial's gateway, with the trial token; the real judge key stays with the runner.
            kwargs.update(base_url=os.environ[JUDGE_GATEWAY_ENV].rstrip("/"), api_key_env=JUDGE_TOKEN_ENV)
        return cls(**kwargs)

    def public(self) -> dict[str, Any]:
        """What may be recorded in metrics: everything but secrets (the key's *name* is fine)."""
        return {k: v for k, v in asdict(self).items() if k != "cache_dir"}


@dataclass
class JudgeReply:
    text: str | None
    error: str | None = None
    cached: bool = False
    attempts: int = 0

    @property
    def ok(self) -> bool:
        return self.text is not None


@dataclass
class JudgeStats:
    requests: int = 0
    cached: int = 0
    failed: int = 0
    retries: int = 0
    errors: dict[str, int] = field(default_factory=dict)


class JudgeClient:
    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
        cache = config.cache_dir or os.path.join(os.path.expanduser("~"), ".cache", "ptbench", "judge")
        self.cache_dir = Path(cache)
        self.stats = JudgeStats()
        self._retry = RetryPolicy(
            max_retries=config.max_retries, base_s=config.backoff_s, max_backoff_s=config.max_backoff_s
        )

    def cache_key(self, payload: dict[str, Any]) -> str:
        # Keyed by endpoint too: the same model name at two servers is not the same judge.
        blob = json.dumps(
            {"base_url": self.config.base_url, "request": payload}, sort_keys=True, ensure_ascii=False
        ).encode()
        return hashlib.sha256(blob).hexdigest()

    def payload(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.config.model, "messages": messages}
        if self.config.temperature is not None:
            body["temperature"] = self.config.temperature
        if self.config.max_tokens is not None:
            body["max_tokens"] = self.config.max_tokens
        if self.config.reasoning_effort is not None:
            body["reasoning_effort"] = self.config.reasoning_effort
        return body

    def complete_all(self, conversations: list[list[dict[str, str]]]) -> list[JudgeReply]:
        """Judge every conversation; replies in input order."""
        if not conversations:
            return []
        return asyncio.run(self._complete_all(conversations))

    async def _complete_all(self, conversations):
        import httpx

        key = os.environ.get(self.config.api_key_env, "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        sem = asyncio.Semaphore(self.config.concurrency)
        limits = httpx.Limits(max_connections=self.config.concurrency)
        async with httpx.AsyncClient(headers=headers, timeout=self.config.timeout_s, limits=limits) as client:
            return await asyncio.gather(*(self._one(client, sem, conv) for conv in conversations))

    async def _one(self, client, sem: asyncio.Semaphore, messages) -> JudgeReply:
        body = self.payload(messages)
        key = self.cache_key(body)
        path = self.cache_dir / self.config.model.replace("/", "_") / key[:2] / f"{key}.json"
        self.stats.requests += 1
        if path.is_file():
            try:
                entry = json.loads(path.read_text())
                if entry.get("key") == key and isinstance(entry.get("text"), str):
                    self.stats.cached += 1
                    return JudgeReply(text=entry["text"], cached=True)
            except (ValueError, AttributeError):
                pass  # a torn or foreign cache file: ask again
        reply = await self._request(client, sem, body)
        if reply.ok:
            from ptbench.core.files import atomic_write_json

            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_json(
                path,
                {
                    "key": key,
                    "base_url": self.config.base_url,
                    "model": self.config.model,
                    "text": reply.text,
                    "at": time.time(),
                },
            )
        else:
            self.stats.failed += 1
            kind = (reply.error or "error").split(":", 1)[0]
            self.stats.errors[kind] = self.stats.errors.get(kind, 0) + 1
        return reply

    async def _request(self, client, sem: asyncio.Semaphore, body: dict[str, Any]) -> JudgeReply:
        import httpx

        url = f"{self.config.base_url}/chat/completions"
        error = "no attempt"
        for attempt in range(1, self.config.max_retries + 2):
            wait = None
            async with sem:
                try:
                    resp = await client.post(url, json=body)
                except httpx.HTTPError as exc:
                    error = f"transport: {type(exc).__name__}"
                else:
                    if resp.status_code == 200:
                        try:
                            text = resp.json()["choices"][0]["message"]["content"]
                        except (ValueError, KeyError, IndexError, TypeError):
                            text = None
                        if isinstance(text, str):
                            return JudgeReply(text=text, attempts=attempt)
                        error = "bad_response: no choices[0].message.content"
                    elif not retryable_status(resp.status_code):
                        # Not transient: retrying cannot help (bad model name, bad key, bad request).
                        said = resp.text[:200]
                        key = os.environ.get(self.config.api_key_env, "")
                        if len(key) >= 8:  # an endpoint that echoes the key must not put it into results
                            said = said.replace(key, f"[REDACTED:{self.config.api_key_env}]")
                        return JudgeReply(text=None, error=f"http_{resp.status_code}: {said}", attempts=attempt)
                    else:
                        error = f"http_{resp.status_code}"
                        wait = parse_retry_after(resp.headers.get("retry-after"))
            delay = self._retry.delay(attempt, wait)
            if delay is None:
                return JudgeReply(text=None, error=error, attempts=attempt)
            self.stats.retries += 1
            await asyncio.sleep(delay)
        return JudgeReply(text=None, error=error, attempts=self.config.max_retries + 1)


def _eval_cache_judge_dir() -> str | None:
    """The judge cache inside the harness-only evaluation cache (PTBENCH_EVAL_CACHE), when one is set."""
    root = os.environ.get("PTBENCH_EVAL_CACHE")
    return os.path.join(root, "judge") if root else None


def require_key(config: JudgeConfig) -> None:
    """A judge that needs a key and has none fails now, with the fix, not after generation."""
    if config.base_url.startswith("https://api.openai.com") and not os.environ.get(config.api_key_env):
        raise UserError(
            f"judge {config.model} at {config.base_url}: environment variable {config.api_key_env} is not set "
            f"(export it, or point judge_api_key_env / PTBENCH_JUDGE_API_KEY_ENV at the variable that holds the key)"
        )
