"""The four real agent CLIs, installed from npm, play a scripted trajectory against the provider.

Each CLI runs non-interactively with permissions bypassed and machine-readable output, in a private
HOME, with only its own (canary) key. The script makes it run a shell command that writes a file and
finish with a message; a resumed session then plays the rest of the script. Nothing is mocked.
Set PTBENCH_CAPTURE_DIR to keep each CLI's native output (how tests/testing/data/ was made).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from ptbench.testing.server import ScriptedProvider
from tests.support import npm_bin, require

CANARY = "sk-canary-3f9a7c21d8e04b6b"
PACKAGES = {
    "claude-code": "@anthropic-ai/claude-code@2.1.328",
    "codex": "@openai/codex@0.169.0",
    "gemini-cli": "@google/gemini-cli@0.61.0",
    "opencode": "opencode-ai@1.18.33",
}
SCRIPT = {
    "turns": [
        {"shell": "echo hello-from-script > made_by_shell.txt && cat made_by_shell.txt"},
        {"message": "First session done."},
        {"write_file": {"path": "second.txt", "content": "from the resumed session\n"}},
        {"message": "Resumed session done."},
    ]
}


@dataclass
class Cli:
    name: str
    binary: str
    argv: Callable[[str, str, str | None, str], list[str]]  # (binary path, prompt, session to resume, base url)
    env: Callable[[str, Path], dict[str, str]]  # (provider base url, home)
    setup: Callable[[str, Path, Path], None]  # (base url, home, workspace)
    session_id: Callable[[list[dict]], str | None]


def _nothing(base: str, home: Path, ws: Path) -> None:
    return None


def _gemini_setup(base: str, home: Path, ws: Path) -> None:
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))


def _opencode_setup(base: str, home: Path, ws: Path) -> None:
    config = {
        "$schema": "https://opencode.ai/config.json",
        "permission": "allow",
        "autoupdate": False,
        "share": "disabled",
        "provider": {
            "ptb": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "ptbench scripted",
                "options": {"baseURL": f"{base}/v1", "apiKey": "{env:PTB_API_KEY}"},
                "models": {"scripted": {"name": "scripted", "tool_call": True}},
            }
        },
        "model": "ptb/scripted",
        "small_model": "ptb/scripted",
    }
    (ws / "opencode.json").write_text(json.dumps(config, indent=2))


def _first(events: list[dict], key: str, where: Callable[[dict], bool] = lambda e: True) -> str | None:
    return next((e[key] for e in events if key in e and where(e)), None)


_CODEX_PROVIDER = (
    'model_providers.ptb={{name="ptb", base_url="{base}/v1", env_key="PTB_API_KEY", wire_api="responses"}}'
)

CLIS = [
    Cli(
        "claude-code",
        "claude",
        lambda b, p, r, base: [
            b,
            "--print",
            "--verbose",
            "--output-format",
            "stream-json",
            "--dangerously-skip-permissions",
            "--model",
            "claude-sonnet-4-5",
            *(["--resume", r] if r else []),
            p,
        ],
        lambda base, home: {
            "ANTHROPIC_BASE_URL": base,
            "ANTHROPIC_API_KEY": CANARY,
            "IS_SANDBOX": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        },
        _nothing,
        lambda ev: _first(ev, "session_id"),
    ),
    Cli(
        "codex",
        "codex",
        lambda b, p, r, base: [
            b,
            "exec",
            *(["resume", r] if r else []),
            "--json",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
            "--model",
            "gpt-5-codex",
            "-c",
            "model_provider=ptb",
            "-c",
            _CODEX_PROVIDER.format(base=base),
            p,
        ],
        lambda base, home: {"PTB_API_KEY": CANARY},
        _nothing,
        lambda ev: _first(ev, "thread_id"),
    ),
    Cli(
        "gemini-cli",
        "gemini",
        lambda b, p, r, base: [
            b,
            "--yolo",
            "--model",
            "gemini-2.5-pro",
            "--output-format",
            "stream-json",
            *(["--resume", r] if r else []),
            "-p",
            p,
        ],
        lambda base, home: {
            "GOOGLE_GEMINI_BASE_URL": base,
            "GEMINI_API_KEY": CANARY,
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
        },
        _gemini_setup,
        lambda ev: _first(ev, "session_id"),
    ),
    Cli(
        "opencode",
        "opencode",
        lambda b, p, r, base: [
            b,
            "run",
            "--model",
            "ptb/scripted",
            "--format",
            "json",
            *(["--session", r] if r else []),
            p,
        ],
        lambda base, home: {
            "PTB_API_KEY": CANARY,
            "OPENCODE_DISABLE_MODELS_FETCH": "true",
            "OPENCODE_DISABLE_AUTOUPDATE": "true",
        },
        _opencode_setup,
        lambda ev: _first(ev, "sessionID"),
    ),
]


def _run(
    cli: Cli, binary: Path, base: str, home: Path, ws: Path, prompt: str, resume: str | None
) -> tuple[list[dict], str]:
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        **cli.env(base, home),
    }
    proc = subprocess.run(
        cli.argv(str(binary), prompt, resume, base),
        cwd=ws,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    events = []
    for line in proc.stdout.splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            pass
    assert proc.returncode == 0, (
        f"{cli.name} exited {proc.returncode}\nstdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    )
    return events, proc.stdout


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.parametrize("cli", CLIS, ids=[c.name for c in CLIS])
def test_real_cli_plays_script_and_resumes(cli: Cli, scripted_provider, tmp_path: Path) -> None:
    binary = npm_bin() / cli.binary
    require(
        binary.exists() or shutil.which(cli.binary) is not None,
        f"{cli.name} not installed: npm install --prefix .cache/npm {PACKAGES[cli.name]} (or set PTBENCH_NPM_PREFIX)",
    )
    binary = binary if binary.exists() else Path(shutil.which(cli.binary) or "")
    provider: ScriptedProvider = scripted_provider(SCRIPT)
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    cli.setup(provider.base_url, home, ws)

    events, first_out = _run(cli, binary, provider.base_url, home, ws, "Do the scripted task.", None)
    assert (ws / "made_by_shell.txt").read_text() == "hello-from-script\n"
    played = [r for r in provider.requests if r["reply"] and r["reply"]["role"] == "script"]
    assert [r["reply"]["turn"] for r in played] == [0, 1]
    assert any("hello-from-script" in out for out in played[1]["tool_outputs"]), (
        "the command's output went back to the model"
    )
    assert "First session done." in first_out

    session = cli.session_id(events)
    assert session, f"no session id in {cli.name}'s output"
    time.sleep(0.5)  # some CLIs flush their session store just after exit
    _, second_out = _run(cli, binary, provider.base_url, home, ws, "Continue.", session)
    assert (ws / "second.txt").read_text() == "from the resumed session\n"
    turns = [r["reply"]["turn"] for r in provider.requests if r["reply"] and r["reply"]["role"] == "script"]
    assert turns[-2:] == [2, 3], turns
    assert "Resumed session done." in second_out

    recorded = json.dumps(provider.requests)
    assert CANARY not in recorded and "[REDACTED]" in recorded, "the key reached the record unredacted"

    capture = os.environ.get("PTBENCH_CAPTURE_DIR")
    if capture:
        Path(capture).mkdir(parents=True, exist_ok=True)
        Path(capture, f"{cli.name}_stream.jsonl").write_text(first_out)
        Path(capture, f"{cli.name}_resume_stream.jsonl").write_text(second_out)
        with open(Path(capture, f"{cli.name}_requests.jsonl"), "w") as fh:
            for r in provider.requests:
                fh.write(
                    json.dumps(
                        {
                            k: r[k]
                            for k in ("method", "path", "query", "api", "tool_names", "tool_outputs", "reply")
                            if k in r
                        }
                    )
                    + "\n"
                )
