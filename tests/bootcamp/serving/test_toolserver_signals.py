"""`ptbench bootcamp serve-tools` stops on SIGINT/SIGTERM whenever the signal comes (during startup,
with SIGINT inherited as ignored, while tool calls hang, async or in a worker thread), withdraws its
`toolserver.json`, and leaves no process behind."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from tests.servers import cpu_load, running, wait_for_file, wait_gone

# Registered through `serve-tools --import hanging_tools`: calls that never return by themselves.
HANGING_TOOLS = """
import asyncio, time
from ptbench.bootcamp.api import Tool, ToolResult, register_tool

@register_tool("hang_async")
class HangAsync(Tool):
    async def execute(self, state, arguments):
        await asyncio.sleep(3600)
        return ToolResult(text="never")

@register_tool("hang_thread")
class HangThread(Tool):
    blocking = True  # runs in a worker thread, which Python cannot interrupt

    def execute_sync(self, state, arguments):
        time.sleep(3600)
        return ToolResult(text="never")
"""


def _args(tmp_path: Path) -> list[str]:
    (tmp_path / "hanging_tools.py").write_text(HANGING_TOOLS)
    return [
        "bootcamp",
        "serve-tools",
        "--dir",
        str(tmp_path / "camp"),
        "--import",
        "hanging_tools",
        "--request-timeout",
        "3600",
    ]


def _env(tmp_path: Path) -> dict[str, str]:
    return {"PYTHONPATH": os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH", "")) if p)}


def _post(url: str, body: dict, timeout: float = 30) -> dict:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    return json.loads(urllib.request.urlopen(req, timeout=timeout).read())


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_signal_during_startup_stops_the_tool_server(tmp_path: Path, sig: signal.Signals) -> None:
    marker = tmp_path / "camp" / "toolserver.json"
    with cpu_load():
        for delay in (0.0, 0.3, 0.8):
            log = tmp_path / f"log-{delay}.txt"
            with running(_args(tmp_path), log, env=_env(tmp_path)) as proc:
                time.sleep(delay)
                proc.send_signal(sig)
                code = wait_gone(proc, log, f"{sig.name} {delay} s after spawn")
            # -sig or a start-up killed by KeyboardInterrupt (1): the signal came before our handler.
            # A SIGINT while the CLI still imports the command is click's Abort: the CLI's Ctrl-C exit, 130.
            early_interrupt = sig == signal.SIGINT and (
                code == 130 or (code == 1 and "KeyboardInterrupt" in log.read_text())
            )
            assert code in (0, -sig) or early_interrupt, (delay, code, log.read_text()[-2000:])
            assert not marker.exists(), "a stopped server leaves no address behind"


@pytest.mark.parametrize("tool", ["hang_async", "hang_thread"])
def test_sigint_stops_the_tool_server_with_a_tool_call_hanging(tmp_path: Path, tool: str) -> None:
    """Started with SIGINT ignored (a background job in CI), one tool call in flight that never ends."""
    marker, log = tmp_path / "camp" / "toolserver.json", tmp_path / "log.txt"
    with running(_args(tmp_path), log, ignore_sigint=True, env=_env(tmp_path)) as proc:
        wait_for_file(marker, proc, log)
        url = json.loads(marker.read_text())["url"]
        iid = _post(f"{url}/v1/instances", {"tool": tool, "identity": {}})["instance_id"]
        outcome: list[object] = []

        def call() -> None:
            try:
                outcome.append(_post(f"{url}/v1/instances/{iid}/execute", {"arguments": {}}, timeout=120))
            except OSError as exc:  # connection closed or reset by the stopping server
                outcome.append(exc)

        caller = threading.Thread(target=call, daemon=True)
        caller.start()
        time.sleep(0.5)  # the call reaches the tool and hangs there
        assert not outcome, outcome
        proc.send_signal(signal.SIGINT)
        assert wait_gone(proc, log, f"SIGINT with {tool} in flight") == 0, log.read_text()[-2000:]
        caller.join(60)
        assert outcome and not isinstance(outcome[0], dict), f"the hanging call was answered: {outcome}"
    assert not marker.exists()
