"""The CLI as a user runs it: `ptbench bootcamp rollout` with the local backend (shards as
subprocesses), equivalence of 1 and 4 shards, and a shard killed mid-way then resumed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from .chat_endpoint import serve_in_thread
from .conftest import shard_records, small_config
from .policies import arithmetic_policy, sql_policy

_TIMING = ("started_at", "latency_s", "model_latency_s")


def _cli(*args: str, **kw) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="200")  # rich wraps the summary table at the default 80
    return subprocess.run(
        [sys.executable, "-m", "ptbench", "bootcamp", *args], capture_output=True, text=True, timeout=300, env=env, **kw
    )


def _content(rec: dict) -> dict:
    rec = {k: v for k, v in rec.items() if k not in _TIMING}
    rec["tool_calls"] = [{k: v for k, v in c.items() if k != "latency_s"} for c in rec["tool_calls"]]
    return rec


def test_generate_cli_is_deterministic(tmp_path: Path) -> None:
    cfg = small_config(tmp_path, "sql_explore")
    for d in ("a", "b"):
        res = _cli("generate", str(cfg), "--out", str(tmp_path / d))
        assert res.returncode == 0, res.stderr
    assert (tmp_path / "a" / "train.parquet").read_bytes() == (tmp_path / "b" / "train.parquet").read_bytes()
    bad = _cli("generate", str(tmp_path / "missing.yaml"))
    assert bad.returncode == 2 and "file not found" in bad.stderr


def test_four_local_shards_merge_to_the_same_episodes_as_one(tmp_path: Path) -> None:
    cfg = small_config(tmp_path, "sql_explore", test=20)
    merged = {}
    with serve_in_thread(sql_policy) as (url, _):
        for shards in (1, 4):
            out = tmp_path / f"out{shards}"
            res = _cli(
                "rollout",
                str(cfg),
                "--endpoint",
                url,
                "--model",
                "scripted",
                "--out",
                str(out),
                "--shards",
                str(shards),
                "--concurrency",
                "4",
            )
            assert res.returncode == 0, res.stdout + res.stderr
            assert "bootcamp/sql_explore" in res.stdout  # the summary table
            merged[shards] = [json.loads(x) for x in (out / "merged" / "traces.jsonl").read_text().splitlines()]
            summary = json.loads((out / "merged" / "summary.json").read_text())
            assert (
                summary["episodes"] == 20 and summary["by_data_source"]["bootcamp/sql_explore"]["success_rate"] == 1.0
            )
    assert len(list((tmp_path / "out4" / "shards").glob("shard-*-of-00004.jsonl"))) == 4
    assert [_content(r) for r in merged[1]] == [_content(r) for r in merged[4]]
    assert [r["index"] for r in merged[4]] == list(range(20))


def test_killed_shards_resume_without_duplicates_or_losses(tmp_path: Path) -> None:
    cfg = small_config(tmp_path, "arithmetic", test=60)
    out = tmp_path / "out"
    args = ["rollout", str(cfg), "--model", "scripted", "--out", str(out), "--shards", "2", "--concurrency", "3"]
    with serve_in_thread(arithmetic_policy(), latency_s=0.05) as (url, _):
        proc = subprocess.Popen(
            [sys.executable, "-m", "ptbench", "bootcamp", *args, "--endpoint", url],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(shard_records(out) if (out / "shards").exists() else []) < 10:
            time.sleep(0.1)
        jobs = json.loads((out / "jobs.json").read_text())["units"]
        for pid in jobs.values():  # the shard processes this test's command started
            os.kill(int(pid), signal.SIGKILL)
        proc.kill()
        proc.wait()
        partial = shard_records(out)
        assert 10 <= len(partial) < 60
        res = _cli(*args, "--endpoint", url)
        assert res.returncode == 0, res.stdout + res.stderr
    recs = shard_records(out)
    counts = Counter(r["sample_id"] for r in recs)
    assert len(counts) == 60 and max(counts.values()) == 1  # nothing lost, nothing twice
    summary = json.loads((out / "merged" / "summary.json").read_text())
    assert summary["episodes"] == 60 and summary["missing"] == 0 and summary["superseded_records"] == 0
    done = [json.loads(p.read_text()) for p in (out / "shards").glob("*.done.json")]
    assert sum(d["skipped"] for d in done) == len(partial)


def test_failed_shard_is_reported_with_exit_2(tmp_path: Path) -> None:
    cfg = small_config(tmp_path, "arithmetic")
    res = _cli(
        "rollout",
        str(cfg),
        "--endpoint",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
        "--out",
        str(tmp_path / "o"),
        "--split",
        "nope",
    )
    assert res.returncode == 2 and "no such split file" in res.stderr


def test_merge_json_and_sft_hand_off(tmp_path: Path) -> None:
    cfg = small_config(tmp_path, "arithmetic", test=8, train=20)
    out = tmp_path / "out"
    with serve_in_thread(arithmetic_policy()) as (url, _):
        res = _cli("rollout", str(cfg), "--endpoint", url, "--model", "scripted", "--out", str(out), "--limit", "5")
        assert res.returncode == 0, res.stderr
    res = _cli("merge", str(out), "--json")
    summary = json.loads(res.stdout)
    stats = summary["by_data_source"]["bootcamp/arithmetic"]
    assert summary["episodes"] == summary["expected"] == 5
    assert stats["n"] == 5 and stats["success_rate"] == 1.0 and stats["turns_mean"] == 3.0 and stats["tool_calls"] == 10
    assert stats["score_min"] == stats["score_max"] == 1.0 and stats["completion_tokens"] == 5 * 21
    # The reference agent's training file: {"prompt", "completion"} lines from the train split.
    train = tmp_path / "workspace" / "data" / "train.jsonl"
    res = _cli("sft", str(cfg), "--out", str(train), "--format", "text")
    assert res.returncode == 0, res.stderr
    lines = [json.loads(x) for x in train.read_text().splitlines()]
    assert len(lines) == 20 and all(set(x) == {"prompt", "completion"} and isinstance(x["prompt"], str) for x in lines)
    # Or chat-format SFT rows from the rollout's correct episodes.
    chats = tmp_path / "chats.jsonl"
    assert _cli("sft", str(cfg), "--out", str(chats), "--from-traces", str(out)).returncode == 0
    rows = [json.loads(x) for x in chats.read_text().splitlines()]
    assert (
        len(rows) == 5
        and rows[0]["messages"][-1]["role"] == "assistant"
        and json.loads(rows[0]["tools"])[0]["function"]["name"] == "calculator"
    )
