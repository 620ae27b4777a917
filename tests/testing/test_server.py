"""The scripted provider over real HTTP: each wire format, tool adaptation, side requests, errors,
redaction, and the `ptbench provider serve` command."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import httpx
import pytest

from ptbench.core.errors import UserError
from ptbench.testing import load_script
from tests.servers import running, wait_for_file, wait_gone

SCRIPT = [
    {"shell": "echo hi > out.txt"},
    {"write_file": {"path": "notes/a.txt", "content": "alpha\n"}},
    {"message": "All done."},
]


def sse_events(text: str) -> list[dict]:
    """The JSON payloads of an SSE body, in order (`[DONE]` dropped)."""
    out = []
    for block in text.split("\n\n"):
        for line in block.splitlines():
            if line.startswith("data: ") and line != "data: [DONE]":
                out.append(json.loads(line[6:]))
    return out


# ----- Anthropic Messages ------------------------------------------------------------------------
CLAUDE_TOOLS = [
    {
        "name": "Bash",
        "input_schema": {
            "type": "object",
            "properties": {"command": {"type": "string"}, "timeout": {"type": "number"}},
            "required": ["command"],
        },
    },
    {
        "name": "Write",
        "input_schema": {
            "type": "object",
            "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["file_path", "content"],
        },
    },
]


def test_anthropic_streams_script_turns_in_order_with_usage(scripted_provider) -> None:
    p = scripted_provider(SCRIPT)
    system = "You are Claude Code.\nPrimary working directory: /work/ws\n"
    messages: list[dict] = [{"role": "user", "content": "go"}]
    body = {"model": "claude-x", "stream": True, "system": system, "tools": CLAUDE_TOOLS, "messages": messages}

    ev = sse_events(httpx.post(f"{p.base_url}/v1/messages?beta=true", json=body).text)
    assert [e["type"] for e in ev] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    block = ev[1]["content_block"]
    assert block["type"] == "tool_use" and block["name"] == "Bash"
    assert json.loads(ev[2]["delta"]["partial_json"]) == {"command": "echo hi > out.txt"}
    assert ev[0]["message"]["usage"]["input_tokens"] > 0 and ev[4]["usage"]["output_tokens"] > 0

    messages += [
        {"role": "assistant", "content": [dict(block, input={"command": "echo hi > out.txt"})]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": block["id"], "content": "ok"}]},
    ]
    ev = sse_events(httpx.post(f"{p.base_url}/v1/messages", json=body).text)
    write = json.loads(ev[2]["delta"]["partial_json"])
    assert ev[1]["content_block"]["name"] == "Write"
    assert write == {"file_path": "/work/ws/notes/a.txt", "content": "alpha\n"}, (
        "relative path made absolute from the system prompt"
    )

    messages += [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "Write", "input": write}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "written"}]},
    ]
    final = httpx.post(f"{p.base_url}/v1/messages", json=dict(body, stream=False)).json()
    assert final["content"] == [{"type": "text", "text": "All done."}] and final["stop_reason"] == "end_turn"
    assert [r["reply"]["turn"] for r in p.requests] == [0, 1, 2]
    assert p.requests[2]["tool_outputs"] == ["ok", "written"]


def test_side_requests_do_not_consume_turns(scripted_provider) -> None:
    p = scripted_provider(SCRIPT)
    title = httpx.post(
        f"{p.base_url}/v1/messages",
        json={"model": "haiku", "max_tokens": 50, "messages": [{"role": "user", "content": "Write a title"}]},
    ).json()
    assert title["content"][0]["text"] == "Scripted session"
    count = httpx.post(
        f"{p.base_url}/v1/messages/count_tokens", json={"messages": [{"role": "user", "content": "x" * 400}]}
    ).json()
    assert count["input_tokens"] >= 100
    main = httpx.post(
        f"{p.base_url}/v1/messages",
        json={"model": "m", "tools": CLAUDE_TOOLS, "messages": [{"role": "user", "content": "go"}]},
    ).json()
    assert main["content"][0]["input"] == {"command": "echo hi > out.txt"}, "first scripted turn still next"
    assert [r["reply"]["role"] for r in p.requests if r["reply"]] == ["side", "script"]


def test_after_the_last_turn_the_provider_keeps_answering(scripted_provider) -> None:
    p = scripted_provider({"turns": [{"message": "only"}], "after_end": "nothing left"})
    msgs = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "only"},
        {"role": "user", "content": "more?"},
    ]
    reply = httpx.post(f"{p.base_url}/v1/messages", json={"model": "m", "tools": CLAUDE_TOOLS, "messages": msgs}).json()
    assert reply["content"][0]["text"] == "nothing left"


# ----- OpenAI Chat Completions (OpenCode's shape) ------------------------------------------------
def _fn(name: str, props: dict, required: list[str]) -> dict:
    return {
        "type": "function",
        "function": {"name": name, "parameters": {"type": "object", "properties": props, "required": required}},
    }


OPENCODE_TOOLS = [
    _fn(
        "bash",
        {"command": {"type": "string"}, "description": {"type": "string"}, "timeout": {"type": "number"}},
        ["command", "description"],
    ),
    _fn("write", {"filePath": {"type": "string"}, "content": {"type": "string"}}, ["filePath", "content"]),
]


def test_chat_completions_stream_and_plain(scripted_provider) -> None:
    p = scripted_provider(
        [
            {"shell": "sleep 1000", "timeout_s": 5},
            {"write_file": {"path": "/abs/b.txt", "content": "b"}},
            {"message": "fin"},
        ]
    )
    msgs: list[dict] = [{"role": "system", "content": "Working directory: /w"}, {"role": "user", "content": "go"}]
    body = {"model": "scripted", "stream": True, "tools": OPENCODE_TOOLS, "messages": msgs}
    chunks = sse_events(httpx.post(f"{p.base_url}/v1/chat/completions", json=body).text)
    call = chunks[1]["choices"][0]["delta"]["tool_calls"][0]
    assert call["function"]["name"] == "bash"
    assert json.loads(call["function"]["arguments"]) == {
        "command": "sleep 1000",
        "timeout": 5000,
        "description": "Scripted step",
    }
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls" and chunks[-1]["usage"]["total_tokens"] > 0

    msgs += [
        {"role": "assistant", "content": None, "tool_calls": [dict(call, index=None)]},
        {"role": "tool", "tool_call_id": call["id"], "content": "slept"},
    ]
    plain = httpx.post(f"{p.base_url}/v1/chat/completions", json=dict(body, stream=False)).json()
    tc = plain["choices"][0]["message"]["tool_calls"][0]["function"]
    assert tc["name"] == "write" and json.loads(tc["arguments"]) == {"filePath": "/abs/b.txt", "content": "b"}
    assert plain["usage"]["prompt_tokens"] > 0


def test_chat_json_schema_side_request_gets_schema_shaped_answer(scripted_provider) -> None:
    p = scripted_provider(SCRIPT)
    schema = {
        "type": "object",
        "properties": {"next_speaker": {"type": "string", "enum": ["user", "model"]}, "reasoning": {"type": "string"}},
        "required": ["reasoning", "next_speaker"],
    }
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "who speaks next?"}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}},
    }
    answer = httpx.post(f"{p.base_url}/v1/chat/completions", json=body).json()
    assert json.loads(answer["choices"][0]["message"]["content"]) == {"reasoning": "Scripted", "next_speaker": "user"}


# ----- OpenAI Responses (Codex's shape) ----------------------------------------------------------
CODEX_TOOLS = [
    {
        "type": "function",
        "name": "exec_command",
        "parameters": {
            "type": "object",
            "properties": {"cmd": {"type": "string"}, "yield_time_ms": {"type": "number"}},
            "required": ["cmd"],
        },
    },
    {
        "type": "function",
        "name": "write_stdin",
        "parameters": {
            "type": "object",
            "properties": {
                "session_id": {"type": "number"},
                "chars": {"type": "string"},
                "yield_time_ms": {"type": "number"},
            },
            "required": ["session_id"],
        },
    },
    {"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}},
]


def test_responses_stream_polls_running_commands_and_patches_files(scripted_provider) -> None:
    p = scripted_provider(SCRIPT)
    items: list[dict] = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<cwd>/repo</cwd> go"}]}
    ]
    body = {"model": "gpt-x", "stream": True, "tools": CODEX_TOOLS, "input": items}

    ev = sse_events(httpx.post(f"{p.base_url}/v1/responses", json=body).text)
    assert ev[0]["type"] == "response.created" and ev[-1]["type"] == "response.completed"
    assert [e["sequence_number"] for e in ev] == list(range(len(ev)))
    call = next(e["item"] for e in ev if e["type"] == "response.output_item.done")
    assert call["type"] == "function_call" and json.loads(call["arguments"]) == {"cmd": "echo hi > out.txt"}
    assert ev[-1]["response"]["usage"]["output_tokens"] > 0

    running = "Chunk ID: 1\nWall time: 10.0 seconds\nProcess running with session ID 4242\nOutput:\n"
    items += [call, {"type": "function_call_output", "call_id": call["call_id"], "output": running}]
    ev = sse_events(httpx.post(f"{p.base_url}/v1/responses", json=body).text)
    poll = next(e["item"] for e in ev if e["type"] == "response.output_item.done")
    assert poll["name"] == "write_stdin" and json.loads(poll["arguments"])["session_id"] == 4242

    items += [
        poll,
        {"type": "function_call_output", "call_id": poll["call_id"], "output": "Process exited with code 0"},
    ]
    ev = sse_events(httpx.post(f"{p.base_url}/v1/responses", json=body).text)
    patch = next(e["item"] for e in ev if e["type"] == "response.output_item.done")
    assert patch["type"] == "custom_tool_call" and patch["name"] == "apply_patch"
    assert patch["input"] == "*** Begin Patch\n*** Add File: /repo/notes/a.txt\n+alpha\n*** End Patch\n"

    items += [patch, {"type": "custom_tool_call_output", "call_id": patch["call_id"], "output": "Success"}]
    final = httpx.post(f"{p.base_url}/v1/responses", json=dict(body, stream=False)).json()
    assert final["output"][0]["content"][0]["text"] == "All done."


def test_shell_tool_with_argv_command_and_heredoc_fallback(scripted_provider, tmp_path: Path) -> None:
    p = scripted_provider(SCRIPT[1:])
    tools = [
        {
            "type": "function",
            "name": "shell",
            "parameters": {
                "type": "object",
                "properties": {
                    "command": {"type": "array", "items": {"type": "string"}},
                    "timeout_ms": {"type": "number"},
                },
                "required": ["command"],
            },
        }
    ]
    body = {"model": "m", "tools": tools, "input": "go"}
    out = httpx.post(f"{p.base_url}/v1/responses", json=body).json()["output"][0]
    argv = json.loads(out["arguments"])["command"]
    assert argv[:2] == ["bash", "-lc"]
    assert argv[2] == "mkdir -p notes && cat > notes/a.txt <<'PTBENCH_EOF'\nalpha\nPTBENCH_EOF"
    subprocess.run(argv, cwd=tmp_path, check=True)  # the heredoc really writes the file
    assert (tmp_path / "notes" / "a.txt").read_text() == "alpha\n"


# ----- Gemini --------------------------------------------------------------------------------------
GEMINI_TOOLS = [
    {
        "functionDeclarations": [
            {
                "name": "run_shell_command",
                "parametersJsonSchema": {
                    "type": "object",
                    "properties": {"command": {"type": "string"}},
                    "required": ["command"],
                },
            },
            {
                "name": "write_file",
                "parametersJsonSchema": {
                    "type": "object",
                    "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
                    "required": ["file_path", "content"],
                },
            },
        ]
    }
]


def test_gemini_stream_generate_content_and_side_checks(scripted_provider) -> None:
    p = scripted_provider(SCRIPT)
    contents: list[dict] = [{"role": "user", "parts": [{"text": "go"}]}]
    body = {"contents": contents, "tools": GEMINI_TOOLS, "systemInstruction": {"parts": [{"text": "sys"}]}}
    url = f"{p.base_url}/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    ev = sse_events(httpx.post(url, json=body, headers={"x-goog-api-key": "AIzaSECRET"}).text)
    part = ev[0]["candidates"][0]["content"]["parts"][0]
    assert part == {"functionCall": {"name": "run_shell_command", "args": {"command": "echo hi > out.txt"}}}
    assert ev[0]["usageMetadata"]["totalTokenCount"] > 0

    check = {
        "contents": contents,
        "generationConfig": {
            "responseMimeType": "application/json",
            "responseJsonSchema": {
                "type": "object",
                "properties": {"next_speaker": {"type": "string", "enum": ["user", "model"]}},
                "required": ["next_speaker"],
            },
        },
    }
    side = httpx.post(f"{p.base_url}/v1beta/models/gemini-2.5-flash:generateContent", json=check).json()
    assert json.loads(side["candidates"][0]["content"]["parts"][0]["text"]) == {"next_speaker": "user"}
    assert httpx.post(f"{p.base_url}/v1beta/models/m:countTokens", json=body).json()["totalTokens"] > 0

    contents += [
        {"role": "model", "parts": [part]},
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "run_shell_command", "response": {"output": "done"}}}],
        },
    ]
    plain = httpx.post(f"{p.base_url}/v1beta/models/gemini-2.5-pro:streamGenerateContent", json=body).json()
    assert plain[0]["candidates"][0]["content"]["parts"][0]["functionCall"]["name"] == "write_file"
    assert "AIzaSECRET" not in json.dumps(p.requests)


# ----- errors, redaction, script files, CLI ----------------------------------------------------------
def test_error_turn_is_served_times_then_the_script_goes_on(scripted_provider) -> None:
    p = scripted_provider([{"error": {"kind": "rate_limit"}, "times": 2}, {"message": "after the storm"}])
    body = {"model": "m", "tools": CLAUDE_TOOLS, "messages": [{"role": "user", "content": "go"}]}
    first = httpx.post(f"{p.base_url}/v1/messages", json=body)
    assert first.status_code == 429 and first.json()["error"]["type"] == "rate_limit_error"
    assert httpx.post(f"{p.base_url}/v1/messages", json=body).status_code == 429
    third = httpx.post(f"{p.base_url}/v1/messages", json=body)
    assert third.status_code == 200 and third.json()["content"][0]["text"] == "after the storm"

    gem = httpx.post(f"{p.base_url}/v1beta/models/m:generateContent", json={"contents": [], "tools": GEMINI_TOOLS})
    assert gem.status_code == 200, "exhausted error turns stay exhausted"


@pytest.mark.parametrize("kind,status", [("auth", 401), ("quota", 429), ("context_length", 400), ("overloaded", 503)])
def test_openai_error_bodies(scripted_provider, kind: str, status: int) -> None:
    p = scripted_provider([{"error": {"kind": kind}}, {"message": "never"}])
    r = httpx.post(f"{p.base_url}/v1/chat/completions", json={"model": "m", "tools": OPENCODE_TOOLS, "messages": []})
    assert r.status_code == status and r.json()["error"]["code"]


def test_secrets_are_redacted_from_headers_and_bodies(scripted_provider, tmp_path: Path) -> None:
    secret = "sk-live-abcdef0123456789"
    p = scripted_provider(SCRIPT)
    leak = {"model": "m", "tools": OPENCODE_TOOLS, "messages": [{"role": "tool", "content": f"KEY={secret}"}]}
    httpx.post(f"{p.base_url}/v1/chat/completions", json=leak, headers={"Authorization": f"Bearer {secret}"})
    on_disk = (tmp_path / "provider-requests.jsonl").read_text()
    assert secret not in on_disk and secret not in json.dumps(p.requests)
    assert p.requests[0]["headers"]["Authorization"] == "[REDACTED]"
    assert "KEY=[REDACTED]" in on_disk


def test_probes_and_unknown_routes(scripted_provider) -> None:
    p = scripted_provider(SCRIPT)
    assert httpx.head(f"{p.base_url}/").status_code == 200
    assert httpx.get(f"{p.base_url}/v1/models").json()["data"][0]["id"] == "scripted"
    r = httpx.post(f"{p.base_url}/v2/embeddings", json={})
    assert r.status_code == 404 and "no route" in r.json()["error"]["message"]
    assert [q["api"] for q in p.requests] == ["probe", "openai.models", "unknown"]


def test_script_files_validate_with_a_useful_message(tmp_path: Path) -> None:
    good = tmp_path / "s.yaml"
    good.write_text("- shell: ls\n- message: ok\n")
    assert [t.kind for t in load_script(good).turns] == ["shell", "message"]
    bad = tmp_path / "bad.yaml"
    bad.write_text("turns:\n  - shell: ls\n    message: both\n")
    with pytest.raises(UserError, match=r"bad.yaml: field turns.0: .*exactly one of"):
        load_script(bad)
    with pytest.raises(UserError, match="cannot read script"):
        load_script(tmp_path / "missing.yaml")


def test_provider_serve_command(tmp_path: Path) -> None:
    script, ready, record, log = (
        tmp_path / "s.json",
        tmp_path / "ready.json",
        tmp_path / "rec.jsonl",
        tmp_path / "log.txt",
    )
    script.write_text(json.dumps({"turns": [{"message": "hello from the CLI"}]}))
    args = ["provider", "serve", "--script", str(script), "--ready-file", str(ready), "--record", str(record)]
    with running(args, log) as proc:  # killed on the way out whatever happens (signal tests: test_server_signals.py)
        wait_for_file(ready, proc, log)
        base = json.loads(ready.read_text())["base_url"]
        r = httpx.post(f"{base}/v1/chat/completions", json={"model": "m", "tools": OPENCODE_TOOLS, "messages": []})
        assert r.json()["choices"][0]["message"]["content"] == "hello from the CLI"
        assert json.loads(record.read_text().splitlines()[0])["api"] == "chat"
        proc.send_signal(signal.SIGINT)
        assert wait_gone(proc, log, "SIGINT") == 0


def test_delay_turn_holds_the_reply(scripted_provider) -> None:
    p = scripted_provider([{"message": "late", "delay_s": 30}])
    body = {"model": "m", "tools": OPENCODE_TOOLS, "messages": []}
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{p.base_url}/v1/chat/completions", json=body, timeout=0.5)
