"""Heavy tools that misbehave on purpose, importable by the worker processes (forkserver pickles by name)."""

from __future__ import annotations

import ctypes
import os
import time
from typing import Any

from ptbench.bootcamp.api import ToolResult, register_tool
from ptbench.bootcamp.serving.heavy import HeavyTool


@register_tool("misbehave")
class Misbehave(HeavyTool):
    """`mode`: ok (returns the worker pid and counts calls in the state), hang, exit, segfault, oom, raise."""

    parameters = {"type": "object", "properties": {"mode": {"type": "string"}}}

    def create_sync(self, identity: dict[str, Any]) -> dict[str, Any]:
        return {"calls": 0}

    def execute_sync(self, state: dict[str, Any], arguments: dict[str, Any]) -> ToolResult:
        state["calls"] += 1
        mode = arguments.get("mode", "ok")
        if mode == "hang":
            while True:  # burns a core until killed
                time.monotonic()
        if mode == "exit":
            os._exit(3)
        if mode == "segfault":
            ctypes.string_at(0)
        if mode == "oom":
            _hog = bytearray(8 * 1024**3)  # past the worker's RLIMIT_AS: MemoryError
        if mode == "raise":
            raise RuntimeError("simulator diverged")
        return ToolResult(text=f"pid {os.getpid()} calls {state['calls']}")
