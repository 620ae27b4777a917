"""Rollouts against a scripted local OpenAI-compatible endpoint: exact trajectories, faults, resume."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from ptbench.bootcamp.data.datagen import Shard
from ptbench.bootcamp.rollout.merge import merge
from ptbench.bootcamp.rollout.runner import read_settings, run_shard, write_settings

from ..chat_endpoint import Faults, serve_in_thread
from ..conftest import make_rollout, shard_records
from ..policies import arithmetic_policy, mastermind_policy, sql_policy


def test_arithmetic_trajectory_is_exactly_the_scripted_one(tmp_path: Path) -> None:
    with serve_in_thread(arithmetic_policy(tool_turns=2)) as (url, stats):
        out = make_rollout(tmp_path, "arithmetic", url)
        counts = run_shard(out, Shard(0, 1))
    assert counts["ok"] == 12 and counts["error"] == 0 and stats.requests == 36
    recs = shard_records(out)
    assert len(recs) == 12
    for r in recs:
        expr = json.loads(json.dumps(r["tool_calls"][0]["arguments"]))["expression"]
        assert [m["role"] for m in r["messages"]] == [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant",
        ]
        assert [c["name"] for c in r["tool_calls"]] == ["calculator", "calculator"]
        assert all(c["arguments"] == {"expression": expr} for c in r["tool_calls"])
        assert r["messages"][3] == {"role": "tool", "tool_call_id": "call_0", "content": r["tool_calls"][0]["result"]}
        assert r["final_text"] == f"The result is \\boxed{{{r['tool_calls'][1]['result']}}}."
        assert r["status"] == "ok" and r["score"] == 1.0 and r["correct"] and r["stop_reason"] == "final_answer"
        assert r["turns"] == 3 and r["n_tool_calls"] == 2 and r["step_rewards"] == [0.0, 0.0]
        assert r["usage"]["completion_tokens"] == 21 and r["usage"]["prompt_tokens"] > 0 and r["requests"] == 3
        assert r["config_hash"] == read_settings(out).config_hash


def test_sql_episodes_explore_then_answer(tmp_path: Path) -> None:
    with serve_in_thread(sql_policy) as (url, _):
        out = make_rollout(tmp_path, "sql_explore", url)
        run_shard(out, Shard(0, 1))
    recs = shard_records(out)
    assert len(recs) == 12 and all(r["correct"] for r in recs)
    for r in recs:
        assert r["tool_calls"][0]["result"].startswith("name\tsql\ndepartments")
        assert r["tool_calls"][1]["metrics"]["calls"] == 2  # the same per-episode tool instance served both calls


def test_mastermind_plays_several_turns_of_interaction(tmp_path: Path) -> None:
    with serve_in_thread(mastermind_policy) as (url, _):
        out = make_rollout(tmp_path, "mastermind", url)
        run_shard(out, Shard(0, 1))
    recs = shard_records(out)
    assert len(recs) == 12 and all(r["correct"] and r["stop_reason"] == "interaction" for r in recs)
    assert max(r["turns"] for r in recs) >= 3
    for r in recs:
        assert len(r["turn_scores"]) == r["turns"]
        assert r["turn_scores"][-1]["score"] == 1.0 and r["turn_scores"][-1]["terminate"]
        assert [m["role"] for m in r["messages"][-2:]] == ["user", "assistant"] or r["turns"] == 1


def test_faults_are_retried_and_every_episode_recorded_exactly_once(tmp_path: Path) -> None:
    faults = Faults(p_500=0.10, p_429=0.05, p_timeout=0.02, retry_after_s=0.05, hang_s=3.0, once_per_request=True)
    with serve_in_thread(arithmetic_policy(), faults=faults) as (url, stats):
        out = make_rollout(tmp_path, "arithmetic", url, test=60, concurrency=16, request_timeout_s=0.5)
        counts = run_shard(out, Shard(0, 1))
        injected = dict(stats.injected)
    recs = shard_records(out)
    assert Counter(r["sample_id"] for r in recs) == Counter({r["sample_id"]: 1 for r in recs}) and len(recs) == 60
    assert all(r["status"] == "ok" and r["correct"] for r in recs)
    kinds = Counter()
    for r in recs:
        kinds.update(r["retries"])
    assert sum(injected.values()) > 0
    assert (
        kinds
        == Counter({"server_error": injected["500"], "rate_limited": injected["429"], "timeout": injected["timeout"]})
        - Counter()
    )
    assert counts["retries"] == sum(injected.values())


def test_failed_episodes_are_recorded_then_redone_on_resume(tmp_path: Path) -> None:
    with serve_in_thread(arithmetic_policy(), faults=Faults(p_500=1.0, once_per_request=False)) as (url, _):
        out = make_rollout(tmp_path, "arithmetic", url, max_retries=1)
        counts = run_shard(out, Shard(0, 1))
    assert counts["error"] == 12
    failed = shard_records(out)
    assert all(r["status"] == "error" and r["score"] is None and r["error"]["kind"] == "server_error" for r in failed)
    assert all(r["error"]["retryable"] and r["requests"] == 2 for r in failed)
    with serve_in_thread(arithmetic_policy()) as (url, _):
        settings = read_settings(out)
        write_settings(out, settings.model_copy(update={"endpoint": url}))
        counts = run_shard(out, Shard(0, 1))
    assert counts["ok"] == 12 and counts["skipped"] == 0
    summary = merge(out)
    assert summary["episodes"] == 12 and summary["missing"] == 0 and summary["superseded_records"] == 12
    merged = [json.loads(x) for x in (out / "merged" / "traces.jsonl").read_text().splitlines()]
    assert all(r["status"] == "ok" and r["attempt"] == 2 for r in merged)
    assert summary["by_data_source"]["bootcamp/arithmetic"]["success_rate"] == 1.0


def test_non_retryable_errors_are_final(tmp_path: Path) -> None:
    def too_long(messages, tools):
        return {"__status__": 400, "__message__": "This model's maximum context length is 1024 tokens"}

    with serve_in_thread(too_long) as (url, stats):
        out = make_rollout(tmp_path, "arithmetic", url)
        run_shard(out, Shard(0, 1))
        assert stats.requests == 12  # no retries for a 400
        counts = run_shard(out, Shard(0, 1))
    assert counts["skipped"] == 12 and counts["ran"] == 0
    recs = shard_records(out)
    assert all(r["stop_reason"] == "context_length" and not r["error"]["retryable"] for r in recs)


def test_tool_call_budget_is_enforced(tmp_path: Path) -> None:
    with serve_in_thread(arithmetic_policy(tool_turns=3)) as (url, _):
        out = make_rollout(tmp_path, "arithmetic", url, extra_yaml="")
        settings = read_settings(out)
        cfg = settings.config.model_copy(
            update={"limits": settings.config.limits.model_copy(update={"max_tool_calls": 1})}
        )
        write_settings(out, settings.model_copy(update={"config": cfg}), force=True)
        run_shard(out, Shard(0, 1))
    for r in shard_records(out):
        assert [c["error"] for c in r["tool_calls"]] == [None, "budget_exhausted", "budget_exhausted"]
        assert "budget exhausted" in r["messages"][5]["content"]


def test_unreachable_endpoint_fails_fast_with_recorded_errors(tmp_path: Path) -> None:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens here now
    out = make_rollout(tmp_path, "arithmetic", f"http://127.0.0.1:{port}/v1", max_retries=1)
    counts = run_shard(out, Shard(0, 1))
    assert counts["error"] == 12
    assert {r["error"]["kind"] for r in shard_records(out)} == {"connection"}


def test_environment_bugs_become_recorded_errors_not_crashes(tmp_path: Path) -> None:
    from ptbench.bootcamp.envs.arithmetic import Calculator

    original = Calculator.create_sync

    def broken(self, identity):
        if identity["answer"] % 2:
            raise RuntimeError("bug in create")
        return original(self, identity)

    Calculator.create_sync = broken
    try:
        with serve_in_thread(arithmetic_policy()) as (url, _):
            out = make_rollout(tmp_path, "arithmetic", url)
            counts = run_shard(out, Shard(0, 1))
    finally:
        Calculator.create_sync = original
    recs = shard_records(out)
    odd = [r for r in recs if r["status"] == "error"]
    assert len(recs) == 12 and counts["error"] == len(odd) > 0
    assert all(
        r["error"]["kind"] == "environment_error"
        and "bug in create" in r["error"]["message"]
        and not r["error"]["retryable"]
        for r in odd
    )
