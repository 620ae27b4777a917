"""Each private API ptbench uses (core/private_api.py), against the installed dependency: an upgrade
that renames or drops one fails here, with the dependency's name, before it fails in a trial."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import psutil

from ptbench.core import private_api
from tests.support import require

REPO = Path(__file__).resolve().parents[2]


def test_aiohttp_bound_port_is_the_port_a_port_0_site_listens_on() -> None:
    from aiohttp import web

    async def scenario() -> tuple[int, int]:
        runner = web.AppRunner(web.Application())
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        try:
            port = private_api.bound_port(site)
            listening = {c.laddr.port for c in psutil.Process().net_connections("tcp") if c.status == "LISTEN"}
            return port, port if port in listening else -1
        finally:
            await runner.cleanup()

    port, seen = asyncio.run(scenario())
    assert port > 0 and seen == port


def test_multiprocessing_helpers_are_stopped() -> None:
    """In a fresh interpreter: start the forkserver and resource tracker, stop them, find them gone."""
    code = (
        "import multiprocessing as mp, psutil\n"
        "from multiprocessing import forkserver, resource_tracker\n"
        "from ptbench.core.private_api import stop_multiprocessing_helpers\n"
        "ctx = mp.get_context('forkserver'); p = ctx.Process(target=print); p.start(); p.join()\n"
        "resource_tracker.ensure_running()\n"
        "before = {c.pid for c in psutil.Process().children()}\n"
        "assert len(before) >= 2, before\n"
        "stop_multiprocessing_helpers()\n"
        "left = [c for c in psutil.Process().children() if c.status() != psutil.STATUS_ZOMBIE]\n"
        "assert not left, left\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip().endswith("ok"), out.stderr
    assert multiprocessing.get_start_method(allow_none=True) in (None, "fork", "forkserver", "spawn")


def test_submitit_sbatch_script_and_submit_module(tmp_path: Path) -> None:
    import importlib.util

    script = private_api.submitit_sbatch_script(
        command="python -u -m " + private_api.SUBMITIT_SUBMIT_MODULE + " " + str(tmp_path),
        folder=tmp_path,
        map_count=3,
        time=5,
        partition="debug",
    )
    assert script.startswith("#!/bin/bash") and "#SBATCH --array=0-2" in script and "--partition=debug" in script
    assert private_api.SUBMITIT_SUBMIT_MODULE in script
    spec = importlib.util.find_spec(private_api.SUBMITIT_SUBMIT_MODULE)
    assert spec is not None and spec.origin and "submitit" in spec.origin


def test_verl_tool_agent_loop_still_reads_the_active_tools_attributes() -> None:
    """verl lives in its own venv (its transformers pin conflicts with ours): asked there."""
    venv = Path(os.environ.get("PTBENCH_VERL_VENV", REPO / ".venv-verl")) / "bin" / "python"
    require(venv.is_file(), f"{venv} missing; build it with `bash scripts/verl-venv.sh`")
    code = (
        "import inspect\n"
        "from verl.experimental.agent_loop.tool_agent_loop import ToolAgentLoop\n"
        "src = inspect.getsource(ToolAgentLoop)\n"
        "for attr in ('_active_tools', '_active_tool_schemas'):\n"
        "    assert f'getattr(agent_data, \"{attr}\"' in src, attr\n"
        "print('ok')\n"
    )
    out = subprocess.run([str(venv), "-c", code], capture_output=True, text=True, timeout=300)
    assert out.stdout.strip() == "ok", out.stderr[-2000:]

    class Data:
        pass

    data = Data()
    private_api.set_verl_active_tools(data, {"t": 1}, [{"name": "t"}])
    assert data._active_tools == {"t": 1} and data._active_tool_schemas == [{"name": "t"}]
