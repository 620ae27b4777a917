"""The HTTP tool server (real aiohttp server in a subprocess) shared by shards, and what a shard
does when the server dies: every episode ends with a recorded `tool_server` error, none hangs."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import yaml

from ptbench.bootcamp import generate, load_bootcamp
from ptbench.bootcamp.data.datagen import Shard
from ptbench.bootcamp.rollout.runner import RolloutSettings, run_shard, write_settings

from ..chat_endpoint import serve_in_thread
from ..conftest import CAMPAIGNS, shard_records
from ..policies import sql_policy


def _remote_sql_rollout(tmp_path: Path, url: str, name: str) -> Path:
    data = yaml.safe_load((CAMPAIGNS / "sql_explore.yaml").read_text())
    data["splits"] = {"test": 10, "train": 2}
    data["tools"][0]["remote"] = True
    data["tools"][0]["timeout_s"] = 5
    (tmp_path / "remote.yaml").write_text(yaml.safe_dump(data))
    cfg = load_bootcamp(tmp_path / "remote.yaml")
    generate(cfg, tmp_path / "data")
    out = tmp_path / name
    write_settings(
        out,
        RolloutSettings(
            config=cfg,
            config_hash=cfg.config_hash(),
            data_dir=str(tmp_path / "data"),
            split="test",
            endpoint=url,
            model="scripted",
            concurrency=4,
            max_retries=0,
        ),
    )
    return out


def _start_server(campaign: Path) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "ptbench", "bootcamp", "serve-tools", "--dir", str(campaign)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while not (campaign / "toolserver.json").exists():
        assert proc.poll() is None and time.monotonic() < deadline, (
            proc.stdout.read().decode() if proc.poll() is not None else "timeout"
        )
        time.sleep(0.1)
    return proc


def test_shards_use_the_tool_server_found_in_the_campaign_dir(tmp_path: Path) -> None:
    with serve_in_thread(sql_policy) as (url, _):
        out = _remote_sql_rollout(tmp_path, url, "out")
        server = _start_server(out)
        try:
            base = json.loads((out / "toolserver.json").read_text())["url"]
            health = json.loads(urllib.request.urlopen(base + "/health", timeout=5).read())
            assert health["status"] == "ok" and "sql_query" in health["tools"]
            counts = run_shard(out, Shard(0, 1))
            assert counts["ok"] == 10
            assert all(r["correct"] and r["tool_calls"][1]["metrics"]["calls"] == 2 for r in shard_records(out))
            health = json.loads(urllib.request.urlopen(base + "/health", timeout=5).read())
            assert health["instances"] == 0  # every episode released its instance
        finally:
            server.terminate()
            server.wait(10)
        assert not (out / "toolserver.json").exists()  # a cleanly stopped server withdraws its address


def test_dead_tool_server_fails_episodes_with_a_recorded_error(tmp_path: Path) -> None:
    with serve_in_thread(sql_policy) as (url, _):
        out = _remote_sql_rollout(tmp_path, url, "out")
        server = _start_server(out)
        marker = (out / "toolserver.json").read_text()
        server.kill()  # dies without cleanup: the address file stays, nothing answers
        server.wait(10)
        (out / "toolserver.json").write_text(marker)
        start = time.monotonic()
        counts = run_shard(out, Shard(0, 1))
        assert time.monotonic() - start < 60
    recs = shard_records(out)
    assert counts["error"] == 10 and len(recs) == 10
    assert all(r["error"]["kind"] == "tool_server" and r["error"]["retryable"] and r["score"] is None for r in recs)


def test_the_http_api_answers_errors_as_before(tmp_path: Path) -> None:
    """The app on a real aiohttp server in this process: bodies are validated (422), unknown tools and
    instances are 404 with a `detail`, and a created instance executes and is released."""
    import asyncio

    from aiohttp.test_utils import TestClient, TestServer

    from ptbench.bootcamp.serving.toolserver import create_app

    async def scenario() -> None:
        async with TestClient(TestServer(create_app())) as client:
            bad = await client.post("/v1/instances", json={"tool": "sql_query"})  # no identity
            assert bad.status == 422 and (await bad.json())["detail"][0]["loc"] == ["identity"]
            unknown = await client.post("/v1/instances", json={"tool": "no_such_tool", "identity": {}})
            assert unknown.status == 404 and "no_such_tool" in (await unknown.json())["detail"]
            gone = await client.post("/v1/instances/abc/execute", json={"arguments": {}})
            assert gone.status == 404 and "no instance abc" in (await gone.json())["detail"]
            released = await client.delete("/v1/instances/abc")
            assert released.status == 200 and await released.json() == {"released": False}
            health = await (await client.get("/health")).json()
            assert health["status"] == "ok" and health["instances"] == 0

    asyncio.run(scenario())
