"""The gateway's stream pass-through: usage read right however the stream is cut, and a provider
that goes silent mid-stream is given up on (the stall watch that replaces aiohttp's per-segment timer).

The stalling provider is a small aiohttp app (the scripted provider cannot stall mid-stream: the seam).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import random
import urllib.error
import urllib.request
from pathlib import Path

from aiohttp import web

from ptbench.core.files import read_jsonl
from ptbench.gateway import Gateway, Upstream, gateway_in_thread, new_trial_token
from ptbench.gateway.wire import SseUsageScanner, Usage, add_usage
from tests.servers import http_handler

STREAMS = {
    "anthropic": [
        {
            "type": "message_start",
            "message": {"usage": {"input_tokens": 1200, "cache_read_input_tokens": 30, "output_tokens": 1}},
        },
        {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "the usage of tokens is..."}},
        {"type": "message_delta", "usage": {"output_tokens": 400}},
        {"type": "message_stop"},
    ],
    "responses": [
        {"type": "response.created", "response": {"usage": None}},
        {"type": "response.output_text.delta", "delta": "usage: say usage"},
        {
            "type": "response.completed",
            "response": {
                "usage": {"input_tokens": 900, "output_tokens": 77, "input_tokens_details": {"cached_tokens": 100}}
            },
        },
        {"type": "response.output_text.delta", "delta": "a late delta mentioning usage"},
    ],
    "chat": [
        {"choices": [{"delta": {"content": "usage"}}]},
        {"choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 9}},
    ],
    "gemini": [
        {
            "candidates": [{"content": {"parts": [{"text": "x"}]}}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 1},
        },
        {
            "candidates": [{"content": {"parts": [{"text": "usageMetadata"}]}}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5},
        },
        {
            "candidates": [{"content": {"parts": [{"text": "y"}]}}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 8, "thoughtsTokenCount": 3},
        },
    ],
}


def _reference(api: str, events: list[dict]) -> Usage:
    """What parsing every event in full gives."""
    u = Usage()
    for e in events:
        add_usage(api, e, u)
    return u


def test_usage_is_the_same_however_the_stream_is_cut() -> None:
    rng = random.Random(7)
    for api, events in STREAMS.items():
        raw = b"".join(b"event: x\ndata: " + json.dumps(e).encode() + b"\n\n" for e in events)
        want = _reference(api, events)
        assert want.seen
        for _ in range(40):
            scanner = SseUsageScanner(api)
            at = 0
            while at < len(raw):
                step = rng.choice([1, 2, 7, 50, 400])
                scanner.feed(raw[at : at + step])
                at += step
            scanner.close()
            assert scanner.usage == want, (api, scanner.usage, want)


def _stalling_upstream():
    async def handle(request: web.Request) -> web.StreamResponse:
        await request.read()
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        await resp.write(
            b'event: message_start\ndata: {"type":"message_start",'
            b'"message":{"usage":{"input_tokens":7,"output_tokens":1}}}\n\n'
        )
        # A later segment: from here on no read timer of aiohttp's is armed, only the gateway's stall watch can act.
        await asyncio.sleep(0.3)
        await resp.write(
            b'event: content_block_delta\ndata: {"type":"content_block_delta",'
            b'"delta":{"type":"text_delta","text":"hi"}}\n\n'
        )
        await asyncio.sleep(30)  # silent mid-stream
        return resp

    return handle


def test_a_provider_silent_mid_stream_is_given_up_on(tmp_path: Path) -> None:
    token = new_trial_token()
    with http_handler(_stalling_upstream()) as base:
        gw = Gateway(token, Upstream("agent", base, "sk-real"), calls_path=tmp_path / "calls.jsonl", read_stall_s=1.0)
        with gateway_in_thread(gw):
            body = json.dumps({"model": "claude-sonnet-4-5", "stream": True, "messages": []}).encode()
            req = urllib.request.Request(
                gw.base_url + "/v1/messages",
                data=body,
                method="POST",
                headers={"x-api-key": token, "content-type": "application/json"},
            )
            got = b""
            try:
                with urllib.request.urlopen(req, timeout=25) as r:
                    got = r.read()
            except TimeoutError:  # the client gave up first: the gateway did not
                raise AssertionError("the gateway kept a silent stream open") from None
            except (urllib.error.URLError, ConnectionError, http.client.IncompleteRead) as exc:
                got = getattr(exc, "partial", b"") or got
    # -1: the gateway ended the reply itself (a shutdown would have recorded the provider's 200)
    calls = read_jsonl(tmp_path / "calls.jsonl")
    assert [c["status"] for c in calls] == [-1], calls
    assert b"message_stop" not in got


_PATHS = {
    "anthropic": "/v1/messages",
    "responses": "/v1/responses",
    "chat": "/v1/chat/completions",
    "gemini": "/v1beta/models/gemini-2.5-pro:streamGenerateContent",
}


def _cut_upstream(rng: random.Random):
    """Writes each reply in random cuts, sometimes pausing so they arrive as separate segments,
    sometimes ending the body right after the last cut (so it reaches the gateway with the end)."""

    async def handle(request: web.Request) -> web.StreamResponse:
        await request.read()
        api = request.headers["x-test-api"]
        raw = b"".join(b"event: x\ndata: " + json.dumps(e).encode() + b"\n\n" for e in STREAMS[api])
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        at = 0
        while at < len(raw):
            step = rng.choice([1, 3, 40, 400])
            await resp.write(raw[at : at + step])
            at += step
            if rng.random() < 0.3:
                await asyncio.sleep(0.002)
        if rng.random() < 0.5:
            await asyncio.sleep(0.01)
        await resp.write_eof()
        return resp

    return handle


def test_streams_pass_through_unchanged_and_usage_is_recorded_for_every_format(tmp_path: Path) -> None:
    """End to end: the agent gets the provider's bytes exactly, and calls.jsonl has the usage a full
    parse of every event gives, however the provider's writes were cut."""
    token = new_trial_token()
    rng = random.Random(11)
    with http_handler(_cut_upstream(rng)) as base:
        gw = Gateway(token, Upstream("agent", base, "sk-real"), calls_path=tmp_path / "calls.jsonl")
        with gateway_in_thread(gw):
            want = []
            for round_ in range(6):
                for api, events in STREAMS.items():
                    model = "gemini-2.5-pro" if api == "gemini" else "claude-sonnet-4-5"
                    body = json.dumps({"model": model, "stream": True, "messages": []}).encode()
                    key = {"x-goog-api-key": token} if api == "gemini" else {"x-api-key": token}
                    req = urllib.request.Request(
                        gw.base_url + _PATHS[api],
                        data=body,
                        method="POST",
                        headers={**key, "x-test-api": api, "content-type": "application/json"},
                    )
                    with urllib.request.urlopen(req, timeout=20) as r:
                        got = r.read()
                    assert got == b"".join(b"event: x\ndata: " + json.dumps(e).encode() + b"\n\n" for e in events), (
                        api,
                        round_,
                    )
                    want.append((api, _reference(api, events)))
    calls = read_jsonl(tmp_path / "calls.jsonl")
    assert len(calls) == len(want)
    for call, (api, usage) in zip(calls, want, strict=True):
        assert (call["api"], call["status"], call["usage_reported"]) == (api, 200, True), call
        assert {k: call[k] for k in usage.to_json()} == usage.to_json(), (api, call)
        assert call["cost_usd"] > 0
