"""Heavy tools in killable worker processes: hangs are killed and replaced, crashes are recorded
errors, the event loop stays responsive, and no worker outlives the rollout (real pebble workers)."""

from __future__ import annotations

import asyncio
import json
import time

import psutil
import pytest

from ptbench.bootcamp.api import TOOLS

from .. import heavy_tools  # noqa: F401  (registers `misbehave`)


def _children() -> set[int]:
    return {c.pid for c in psutil.Process().children(recursive=True) if c.status() != psutil.STATUS_ZOMBIE}


def test_hang_is_killed_at_its_timeout_and_the_worker_replaced_crashes_are_errors() -> None:
    before = _children()
    tool = TOOLS.get("misbehave")(call_timeout_s=1.5, memory_mb=512, workers=1)

    async def scenario() -> dict[str, object]:
        state = await tool.create({})
        first = await tool.execute(state, {"mode": "ok"})
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.05)
                ticks += 1

        t = asyncio.create_task(ticker())
        hang = await tool.execute(state, {"mode": "hang"})
        t.cancel()
        after_hang = await tool.execute(state, {"mode": "ok"})
        crashed = {m: await tool.execute(state, {"mode": m}) for m in ("exit", "segfault", "oom", "raise")}
        last = await tool.execute(state, {"mode": "ok"})
        await tool.aclose()
        return {
            "first": first,
            "hang": hang,
            "ticks": ticks,
            "after": after_hang,
            "crashed": crashed,
            "last": last,
            "state": state,
        }

    out = asyncio.run(scenario())
    first_pid = out["first"].text.split()[1]
    assert out["hang"].error == "timeout" and "killed after 1.5 s" in out["hang"].text
    assert out["ticks"] >= 10  # the loop kept running while the worker spun
    assert out["after"].error is None and out["after"].text.split()[1] != first_pid  # a fresh worker
    crashed = out["crashed"]
    assert crashed["exit"].error == "tool_crashed" and "exit code" in crashed["exit"].text
    assert crashed["segfault"].error == "tool_crashed" and "-11" in crashed["segfault"].text
    assert crashed["oom"].error == "tool_memory"
    assert crashed["raise"].error == "tool_exception" and "simulator diverged" in crashed["raise"].text
    assert out["last"].error is None
    # State changes made in a worker come back (calls the worker completed: ok, ok, raise is lost, ok ...)
    assert out["state"]["calls"] >= 3
    deadline = time.monotonic() + 10
    while _children() - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not (_children() - before), "a worker process survived aclose"


def test_episode_timeout_cancels_and_kills_the_worker(tmp_path) -> None:
    """The episode's own `timeout_s` (asyncio.wait_for) also kills the worker, via cancellation."""
    tool = TOOLS.get("misbehave")(call_timeout_s=60, memory_mb=512, workers=1)

    async def scenario() -> tuple[str, str]:
        state = await tool.create({})
        pid_a = (await tool.execute(state, {"mode": "ok"})).text.split()[1]
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(tool.execute(state, {"mode": "hang"}), 1.0)
        pid_b = (await tool.execute(state, {"mode": "ok"})).text.split()[1]
        await tool.aclose()
        return pid_a, pid_b

    pid_a, pid_b = asyncio.run(scenario())
    assert pid_a != pid_b
    assert not psutil.pid_exists(int(pid_a)) or psutil.Process(int(pid_a)).status() == psutil.STATUS_ZOMBIE


def test_rollout_records_worker_crashes_and_leaves_no_worker(tmp_path, campaign_copy) -> None:
    """A full shard against the scripted endpoint: each crash mode is a recorded tool error in the
    trace, the episodes still end `ok`, and no process is left once the shard returns."""
    from ptbench.bootcamp.data.datagen import Shard
    from ptbench.bootcamp.rollout.runner import run_shard

    from ..chat_endpoint import serve_in_thread
    from ..conftest import rollout_with, shard_records
    from ..policies import _tool_call

    modes = ["hang", "exit", "segfault", "oom", "ok"]

    def policy(messages, tools):
        n = sum(m["role"] == "tool" for m in messages)
        if n < len(modes):
            return {
                "role": "assistant",
                "content": None,
                "tool_calls": [_tool_call(n, "misbehave", {"mode": modes[n]})],
            }
        return {"role": "assistant", "content": "\\boxed{0}"}

    before = _children()
    with serve_in_thread(policy) as (url, _stats):
        out = rollout_with(
            tmp_path,
            url,
            tools=[
                {
                    "name": "misbehave",
                    "params": {"call_timeout_s": 1.0, "memory_mb": 512, "workers": 2},
                    "timeout_s": 20,
                }
            ],
            imports=["tests.bootcamp.heavy_tools"],
            limits={"max_assistant_turns": 8, "max_tool_calls": 8},
        )
        run_shard(out, Shard(0, 1))
    recs = shard_records(out)
    assert len(recs) == 3 and all(r["status"] == "ok" for r in recs), [r.get("error") for r in recs]
    for r in recs:
        assert [c["error"] for c in r["tool_calls"]] == ["timeout", "tool_crashed", "tool_crashed", "tool_memory", None]
        tool_msgs = [m["content"] for m in r["messages"] if m["role"] == "tool"]
        assert tool_msgs[1].startswith("error: tool process died")  # the model saw it
    assert json.loads((out / "shards" / f"{Shard(0, 1).tag}.done.json").read_text())["ok"] == 3
    deadline = time.monotonic() + 10
    while _children() - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not (_children() - before)


def test_workers_die_with_a_killed_shard(tmp_path) -> None:
    """SIGKILL the process that owns the pool mid-call: its workers (and the forkserver) go too."""
    import os
    import signal
    import subprocess
    import sys

    script = tmp_path / "owner.py"
    script.write_text(
        "import asyncio, sys\n"
        "from ptbench.bootcamp.api import TOOLS\n"
        "import tests.bootcamp.heavy_tools\n"
        "tool = TOOLS.get('misbehave')(call_timeout_s=600, memory_mb=512, workers=2)\n"
        "async def main():\n"
        "    s = await tool.create({})\n"
        "    print((await tool.execute(s, {'mode': 'ok'})).text.split()[1], flush=True)\n"
        "    await tool.execute(s, {'mode': 'hang'})\n"
        "if __name__ == '__main__':  # forkserver children import the main module, as with spawn\n"
        "    asyncio.run(main())\n"
    )
    repo = str(__import__("pathlib").Path(__file__).resolve().parents[3])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([repo, os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=env, cwd=repo)
    try:
        pid = int(proc.stdout.readline())
        family = [p.pid for p in psutil.Process(proc.pid).children(recursive=True)]
        assert pid in family
        time.sleep(0.5)  # the hang is running
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 15
        alive = family
        while alive and time.monotonic() < deadline:
            alive = [p for p in family if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
            time.sleep(0.2)
        assert not alive, f"workers outlived their killed owner: {alive}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
