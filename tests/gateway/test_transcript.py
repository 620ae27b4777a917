"""The gateway's transcript against the scripted provider in all four wire formats, streamed and
not: the model's text put back together, only the new messages of each call kept, and the real
key and the trial token never written (the real CLIs' streams and tool calls are in
tests/launch/test_trial_gateway.py and tests/integrity/test_contamination_transcript.py, which are slow)."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from ptbench.agents.redact import Redactor
from ptbench.core.files import read_jsonl
from ptbench.gateway import Gateway, Upstream, gateway_in_thread, new_trial_token
from ptbench.gateway.transcript import Transcript

REAL = "sk-real-transcript-canary-31f0c2"
SAID = "The quick brown fox computes 48 plus 27 equals 75 before breakfast"


def _post(url: str, body: dict, headers: dict) -> tuple[int, bytes]:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST", headers={"content-type": "application/json", **headers}
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.status, r.read()


SCHEMA = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}


def _call(base: str, api: str, token: str, stream: bool, messages: list[dict]) -> tuple[int, bytes]:
    """One request in the API's own format, advertising a shell tool as the CLIs do."""
    if api == "anthropic":
        body = {"model": "claude-sonnet-4-5", "max_tokens": 100, "stream": stream, "messages": messages}
        body["tools"] = [{"name": "Bash", "input_schema": SCHEMA}]
        return _post(f"{base}/v1/messages", body, {"x-api-key": token})
    if api == "chat":
        body = {"model": "scripted", "stream": stream, "messages": messages}
        body["tools"] = [{"type": "function", "function": {"name": "bash", "parameters": SCHEMA}}]
        return _post(f"{base}/v1/chat/completions", body, {"authorization": f"Bearer {token}"})
    if api == "responses":
        body = {"model": "gpt-5-codex", "stream": stream, "input": messages, "instructions": "be brief"}
        body["tools"] = [{"type": "function", "name": "shell", "parameters": SCHEMA}]
        return _post(f"{base}/v1/responses", body, {"authorization": f"Bearer {token}"})
    contents = [{"role": m["role"].replace("assistant", "model"), "parts": [{"text": m["content"]}]} for m in messages]
    tools = [{"functionDeclarations": [{"name": "run_shell_command", "parameters": SCHEMA}]}]
    verb = "streamGenerateContent?alt=sse" if stream else "generateContent"
    body = {"contents": contents, "tools": tools}
    return _post(f"{base}/v1beta/models/gemini-2.5-pro:{verb}", body, {"x-goog-api-key": token})


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "json"])
@pytest.mark.parametrize("api", ["anthropic", "chat", "responses", "gemini"])
def test_replies_are_reassembled_and_only_new_messages_kept(tmp_path: Path, scripted_provider, api, stream) -> None:
    provider = scripted_provider([{"message": SAID}, {"shell": f"echo '{SAID}' > /dev/null"}])
    token = new_trial_token()
    path = tmp_path / "record" / "transcript.jsonl"
    redact = Redactor({"ANTHROPIC_API_KEY": REAL, "trial_token": token}).bytes
    gw = Gateway(token, Upstream("agent", provider.base_url, REAL), transcript=Transcript(path, redact=redact))
    first = [{"role": "user", "content": f"hello, my key is {REAL} and my token {token}"}]
    with gateway_in_thread(gw) as g:
        assert _call(g.base_url, api, token, stream, first)[0] == 200
        second = [*first, {"role": "assistant", "content": SAID}, {"role": "user", "content": "and now?"}]
        assert _call(g.base_url, api, token, stream, second)[0] == 200
    data = path.read_bytes()
    assert REAL.encode() not in data and token.encode() not in data
    assert b"[REDACTED:ANTHROPIC_API_KEY]" in data and b"[REDACTED:trial_token]" in data
    lines = read_jsonl(path)
    requests = [r for r in lines if r["dir"] == "request"]
    replies = [r for r in lines if r["dir"] == "response"]
    assert [r["call"] for r in requests] == [1, 2] and [r["call"] for r in replies] == [1, 2]
    assert SAID in replies[0]["text"], replies[0]
    # a tool call, its arguments put back together from the stream's fragments
    [tool_call] = replies[1]["tool_calls"]
    assert tool_call["name"] and SAID in json.loads(tool_call["arguments"])["command"], replies[1]
    assert all(r["route"] == "agent" and r["status"] == 200 for r in replies)
    # the second request kept only what was new: the model's reply and the next question
    assert requests[0]["conversation"] == requests[1]["conversation"]
    assert (requests[0]["from"], requests[0]["of"], requests[1]["from"], requests[1]["of"]) == (0, 1, 1, 3)
    assert "and now?" in json.dumps(requests[1]["messages"]) and "hello" not in json.dumps(requests[1]["messages"])
    if api == "responses":
        assert requests[0]["system"] == "be brief" and "system" not in requests[1]  # kept once, unchanged
