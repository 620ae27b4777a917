"""The gateway on its own: token check, key swap, retries with Retry-After, records, and the spy's control case.

The upstream is the scripted provider where it can play the part; a provider that answers 429 with
Retry-After is a small aiohttp app here (the scripted provider cannot send that header: the seam).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from aiohttp import web

from ptbench.core.files import read_jsonl
from ptbench.core.retry import RetryPolicy
from ptbench.gateway import Gateway, Upstream, gateway_in_thread, new_trial_token
from tests.environ_reader import SRC, environ_read
from tests.servers import http_handler

REAL = "sk-real-canary-0b7d2e9f41"


def _post(url: str, body: dict, headers: dict) -> tuple[int, bytes]:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST", headers={"content-type": "application/json", **headers}
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_token_is_swapped_for_the_key_and_everything_else_refused(tmp_path: Path, scripted_provider) -> None:
    provider = scripted_provider([{"message": "hello"}, {"message": "again"}])
    token = new_trial_token()
    up = Upstream("agent", provider.base_url, REAL, models={"gemini-2.5-pro": "gemini-2.5-pro"})
    with gateway_in_thread(Gateway(token, up, calls_path=tmp_path / "calls.jsonl")) as gw:
        body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
        url = f"{gw.base_url}/v1beta/models/gemini-2.5-pro:generateContent"
        assert _post(url, body, {"x-goog-api-key": REAL})[0] == 401  # the real key itself is no token
        assert _post(url, body, {})[0] == 401
        status, out = _post(url + f"?key={token}", body, {})  # the query-string style
        assert status == 200 and b"candidates" in out
        status, out = _post(url, body, {"x-goog-api-key": token})
        assert status == 200 and b"candidates" in out
        status, out = _post(
            f"{gw.base_url}/v1beta/models/gemini-2.5-flash:generateContent", body, {"x-goog-api-key": token}
        )
        assert status == 403 and b"not allowed" in out
    forwarded = [r for r in provider.requests if r["api"] == "gemini"]
    assert len(forwarded) == 2 and all("key" not in r["query"] or r["query"]["key"] != token for r in forwarded)
    assert all(
        r["headers"].get("x-goog-api-key") == "[REDACTED]" or r["query"].get("key") == "[REDACTED]" for r in forwarded
    )
    calls = read_jsonl(tmp_path / "calls.jsonl")
    assert [c["status"] for c in calls] == [401, 401, 200, 200, 403]
    assert all(c["input_tokens"] > 0 and c["output_tokens"] > 0 for c in calls if c["status"] == 200)
    assert REAL not in (tmp_path / "calls.jsonl").read_text() and token not in (tmp_path / "calls.jsonl").read_text()


def _flaky_upstream(fails: int, retry_after: str, seen: list[tuple[float, str]]):
    """An upstream handler that answers 429 (Retry-After) `fails` times, then a streamed Anthropic reply."""

    async def handle(request: web.Request) -> web.StreamResponse:
        seen.append((time.monotonic(), request.headers.get("x-api-key", "")))
        if len(seen) <= fails:
            return web.json_response(
                {"type": "error", "error": {"type": "rate_limit_error", "message": f"slow down, {REAL}"}},
                status=429,
                headers={"Retry-After": retry_after},
            )
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        await resp.write(
            b'event: message_start\ndata: {"type":"message_start",'
            b'"message":{"usage":{"input_tokens":7,"output_tokens":1}}}\n\n'
        )
        await resp.write(b'event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":5}}\n\n')
        await resp.write_eof()
        return resp

    return handle


def test_429_is_retried_after_retry_after_and_error_text_is_redacted(tmp_path: Path) -> None:
    seen: list[tuple[float, str]] = []
    with http_handler(_flaky_upstream(2, "0.3", seen)) as base:
        token = new_trial_token()
        gw = Gateway(
            token,
            Upstream("agent", base, REAL),
            calls_path=tmp_path / "calls.jsonl",
            redact=lambda s: s.replace(REAL, "[R]"),
        )
        with gateway_in_thread(gw):
            status, out = _post(f"{gw.base_url}/v1/messages", {"model": "claude-sonnet-4-5"}, {"x-api-key": token})
            assert status == 200 and b"message_delta" in out
            assert len(seen) == 3 and all(k == REAL for _, k in seen)
            assert seen[1][0] - seen[0][0] >= 0.29 and seen[2][0] - seen[1][0] >= 0.29  # Retry-After honoured
            gw.retry = RetryPolicy(max_retries=0)  # now the 429 reaches the client, its body recorded redacted
            seen.clear()
            status, out = _post(f"{gw.base_url}/v1/messages", {"model": "claude-sonnet-4-5"}, {"x-api-key": token})
            assert status == 429
    calls = read_jsonl(tmp_path / "calls.jsonl")
    assert (
        calls[0]["attempts"] == 3
        and calls[0]["input_tokens"] == 7
        and calls[0]["output_tokens"] == 5
        and calls[0]["cost_usd"] > 0
    )
    assert calls[1]["status"] == 429 and "[R]" in calls[1]["error"] and REAL not in json.dumps(calls)


def test_spy_finds_a_canary_where_one_is_visible(tmp_path: Path) -> None:
    """The control case: the spy of the sandbox tests does find a key in a process's environment."""
    spy = Path(__file__).resolve().parents[1] / "agents" / "spy" / "spy.py"
    (tmp_path / "home").mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"), "SOME_KEY": REAL}
    out = subprocess.run(
        [sys.executable, str(spy), str(tmp_path / "home"), REAL.encode().hex()],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path / "home",
    )
    assert out.stdout.startswith("SPY-LEAK") and "environ" in out.stdout


def test_not_dumpable_hides_the_runners_environment_from_its_own_uid() -> None:
    """Under `sandbox: none` the agent is the runner's uid: make_not_dumpable closes /proc/PID/environ to it.

    The control without the call shows the read works otherwise."""
    holder_code = (
        "import sys, time\nfrom ptbench.core.procsec import make_not_dumpable\n"
        "ok = make_not_dumpable() if sys.argv[1] == '1' else True\nprint('ready' if ok else 'failed', flush=True)\n"
        "time.sleep(60)"
    )
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": SRC, "SOME_KEY": REAL}
    reads = {
        hardened: environ_read([sys.executable, "-c", holder_code, hardened], REAL, env=env) for hardened in ("1", "0")
    }
    assert "PermissionError" in reads["1"], reads
    assert reads["0"] == "1", reads  # the control: a dumpable process's environment is readable


def test_judge_route_uses_the_trial_token_and_has_its_own_cap(tmp_path: Path, scripted_provider, monkeypatch) -> None:
    """The agent's evaluate.sh judges through the gateway: JudgeConfig follows PTBENCH_JUDGE_GATEWAY."""
    from ptbench.inference.judge import (
        JUDGE_GATEWAY_ENV,
        JUDGE_TOKEN_ENV,
        JudgeClient,
        JudgeConfig,
    )

    provider = scripted_provider([{"message": "[[A>B]]"}, {"message": "[[B>A]]"}])
    token = new_trial_token()
    agent = Upstream("agent", "http://127.0.0.1:9", "unused-agent-key")
    judge = Upstream("judge", provider.base_url + "/v1", REAL, models={"gpt-5-mini": "gpt-5-mini"}, cost_cap_usd=1e-9)
    with gateway_in_thread(Gateway(token, agent, judge=judge, calls_path=tmp_path / "calls.jsonl")) as gw:
        monkeypatch.setenv(JUDGE_GATEWAY_ENV, f"{gw.base_url}/judge")
        monkeypatch.setenv(JUDGE_TOKEN_ENV, token)
        monkeypatch.setenv("OPENAI_API_KEY", "")
        config = JudgeConfig.from_options(
            {
                "judge_base_url": "https://elsewhere.example/v1",
                "judge_max_retries": 0,
                "judge_cache_dir": str(tmp_path / "cache"),
            },
            default_model="gpt-5-mini",
        )
        assert config.base_url == f"{gw.base_url}/judge" and config.api_key_env == JUDGE_TOKEN_ENV
        first = JudgeClient(config).complete_all([[{"role": "user", "content": "judge this"}]])
        second = JudgeClient(config).complete_all([[{"role": "user", "content": "and this"}]])
    assert first[0].text and first[0].error is None
    assert second[0].text is None and "http_403" in second[0].error and "cost cap" in second[0].error
    forwarded = [r for r in provider.requests if r["api"] == "chat"]
    assert len(forwarded) == 1 and forwarded[0]["path"] == "/v1/chat/completions"
    calls = read_jsonl(tmp_path / "calls.jsonl")
    assert [c["route"] for c in calls] == ["judge", "judge"] and calls[1]["refused"] == "ptbench_cost_cap"


def test_only_the_model_apis_are_open(tmp_path: Path, scripted_provider) -> None:
    """A hostile agent with its token cannot reach files, batches or fine-tuning with the real key."""
    provider = scripted_provider([{"message": "hello"}])
    token = new_trial_token()
    with gateway_in_thread(
        Gateway(token, Upstream("agent", provider.base_url, REAL), calls_path=tmp_path / "calls.jsonl")
    ) as gw:
        for path in ("/v1/fine_tuning/jobs", "/v1/files", "/v1/messages/batches", "/v1/batches"):
            status, out = _post(gw.base_url + path, {"model": "gpt-5"}, {"authorization": f"Bearer {token}"})
            assert status == 403 and b"not an API this trial may use" in out, (path, status, out)
    assert provider.requests == []  # nothing was forwarded


def test_the_model_check_reads_the_model_the_provider_will_read(tmp_path: Path) -> None:
    """Hostile bodies: a second "model" key, an escaped key, a model name the fast parser refuses,
    a big integer that must reach the provider unchanged when an alias rewrites the body."""
    seen: list[bytes] = []

    async def handle(request: web.Request) -> web.Response:
        seen.append(await request.read())
        return web.json_response({"type": "message", "usage": {"input_tokens": 3, "output_tokens": 2}})

    token = new_trial_token()
    ok = "claude-sonnet-4-5"
    with http_handler(handle) as base:
        up = Upstream("agent", base, REAL, models={ok: ok, "alias/sonnet": ok})
        with gateway_in_thread(Gateway(token, up, calls_path=tmp_path / "calls.jsonl")) as gw:

            def post(raw: bytes) -> int:
                req = urllib.request.Request(
                    gw.base_url + "/v1/messages",
                    data=raw,
                    method="POST",
                    headers={"x-api-key": token, "content-type": "application/json"},
                )
                try:
                    with urllib.request.urlopen(req, timeout=30) as r:
                        return r.status
                except urllib.error.HTTPError as e:
                    return e.code

            assert post(b'{"model": "%s", "model": "claude-opus-4-1"}' % ok.encode()) == 403
            assert post(b'{"model": "%s", "mod\\u0065l": "claude-opus-4-1"}' % ok.encode()) == 403
            assert post(b'{"model": "claude-opus-4-1", "model": "%s"}' % ok.encode()) == 200
            assert post(b'{"model": "\\ud800%s"}' % ok.encode()) == 403
            assert post(b'{"model": "%s", "x": NaN}' % ok.encode()) == 200
            assert post(b'{"model": "alias/sonnet", "n": 123456789012345678901234567890}') == 200
            assert post(b'{"model": "%s"' % ok.encode()) == 400
    assert len(seen) == 3
    assert json.loads(seen[-1]) == {"model": ok, "n": 123456789012345678901234567890}
    assert [c["status"] for c in read_jsonl(tmp_path / "calls.jsonl")] == [403, 403, 200, 403, 200, 200]
