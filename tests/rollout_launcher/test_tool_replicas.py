"""Tool-server replicas of a rollout on the local backend: real `serve-tools --replica` processes
(aiohttp) started and stopped by the same executor code as on Slurm, a real shard, and a
replica SIGKILLed mid-rollout. Every episode is recorded exactly once, the ones that lost their
replica are replayed from the start on a survivor and say so, no replica survives the rollout, and
nothing without the rollout's token gets an answer."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil
import pytest
import yaml

from ptbench.bootcamp import generate, load_bootcamp
from ptbench.bootcamp.data.datagen import Shard, load_rows
from ptbench.bootcamp.rollout.runner import RolloutSettings, run_shard, write_settings
from ptbench.bootcamp.serving.replica_pool import Replica, ReplicaPool
from ptbench.bootcamp.serving.replicas import _mac, new_run, read_replicas, read_token, replica_dir, sign
from ptbench.core.errors import UserError
from ptbench.rollout_launcher.tool_replicas import replica_status_rows, tool_replicas
from tests.bootcamp.chat_endpoint import serve_in_thread
from tests.bootcamp.conftest import CAMPAIGNS, shard_records
from tests.bootcamp.policies import sql_policy


def remote_sql_config(tmp_path: Path, test: int) -> Path:
    data = yaml.safe_load((CAMPAIGNS / "sql_explore.yaml").read_text())
    data["splits"] = {"test": test, "train": 2}
    data["tools"][0].update(remote=True, timeout_s=2)  # a hung replica is noticed within 2 + 5 s
    path = tmp_path / "remote.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def replica_rollout(
    tmp_path: Path, url: str, replicas: int, test: int = 18, concurrency: int = 6, wait_s: float = 60
) -> Path:
    cfg = load_bootcamp(remote_sql_config(tmp_path, test))
    generate(cfg, tmp_path / "data")
    out = tmp_path / "out"
    write_settings(
        out,
        RolloutSettings(
            config=cfg,
            config_hash=cfg.config_hash(),
            data_dir=str(tmp_path / "data"),
            split="test",
            endpoint=url,
            model="scripted",
            concurrency=concurrency,
            max_retries=0,
            tool_replicas=replicas,
            tool_replica_wait_s=wait_s,
        ),
    )
    return out


def health(url: str, token: str | None = None, *, header: str | None = None) -> tuple[int, dict]:
    """GET /health signed with `token` (or with the raw `header`, or unsigned)."""
    auth = header if header is not None else sign(token, "GET", "/health") if token else None
    req = urllib.request.Request(url + "/health", headers={"Authorization": auth} if auth else {})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def replica_processes(out: Path) -> list[psutil.Process]:
    """Any process still serving a replica of this rollout (the test must leave none)."""
    found = []
    for p in psutil.process_iter(["cmdline"]):
        cmd = p.info["cmdline"] or []
        if "--replica" in cmd and str(out) in cmd:
            found.append(p)
    return found


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGSTOP], ids=["dies", "hangs"])
def test_killed_replica_moves_its_episodes_and_each_is_recorded_once(
    tmp_path: Path, how: signal.Signals, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGKILL: connections refused at once. SIGSTOP: the kernel still accepts connections, nothing
    answers; the call's timeout, then a failed health check, declare it dead.

    The kill is timed, not left to chance: the scripted endpoint kills the replica of an episode that
    has made its first tool call and is asking for its second (so that episode must lose its state and be
    replayed), after 3 episodes were recorded. Which replica holds that episode is read from the shard's
    own ReplicaPool.assign, wrapped to record its answer (a spy: the pool works unchanged)."""
    bound: dict[str, Replica] = {}  # sample id -> the replica the pool assigned it
    assign = ReplicaPool.assign

    async def spy(self: ReplicaPool, key: str) -> Replica:
        bound[key] = replica = await assign(self, key)
        return replica

    monkeypatch.setattr(ReplicaPool, "assign", spy)
    killed: dict = {}
    out = tmp_path / "out"

    def kill_mid_episode(messages: list[dict], tools: object) -> dict:
        reply = sql_policy(messages, tools)
        if killed or len(shard_records(out)) < 3 or sum(m["role"] == "tool" for m in messages) != 1:
            return reply
        sids = by_question.get(next(m["content"] for m in messages if m["role"] == "user"), [])
        if len(sids) != 1 or sids[0] not in bound:
            return reply
        victim = bound[sids[0]]
        # evidence that it holds work: this episode's instance, at least
        in_flight = health(victim.url, read_token(out))[1]["instances"]
        os.kill(victim.pid, how)  # before the reply that makes the episode call the replica again
        killed.update(victim.describe(), in_flight=in_flight, episode=sids[0], at=time.time())
        return reply

    # The endpoint's latency keeps several episodes in flight on every replica when one dies.
    with serve_in_thread(kill_mid_episode, latency_s=0.05) as (url, _):
        assert replica_rollout(tmp_path, url, replicas=3) == out
        by_question: dict[str, list[str]] = {}
        for row in load_rows(tmp_path / "data", "test"):
            question = next(m["content"] for m in row["prompt"] if m["role"] == "user")
            by_question.setdefault(question, []).append(row["extra_info"]["sample_id"])
        with tool_replicas(out, 3, "local") as jobs:
            assert sorted(jobs) == ["0", "1", "2"]
            counts = run_shard(out, Shard(0, 1))
            pids = [int(p) for p in jobs.values()]
        assert killed, "the replica was never killed"
        assert killed["in_flight"] >= 1, killed
    records = shard_records(out)
    ids = [r["sample_id"] for r in records]
    assert len(ids) == 18 and len(set(ids)) == 18  # every episode exactly once, none duplicated
    assert counts["ok"] == 18 and all(r["status"] == "ok" and r["correct"] for r in records)
    restarted = [r for r in records if r["restarts"]]
    # the ones it held mid-tool-use, and any that started on it before the shard noticed it was dead
    # (one past its last tool call needs no replica and keeps its result: it is still correct)
    assert 1 <= len(restarted) == counts["restarts"]
    assert killed["episode"] in {r["sample_id"] for r in restarted}  # the one caught between its two tool calls
    for r in restarted:
        (hop,) = r["restarts"]
        assert hop["from_replica"]["replica"] == killed["replica"] and hop["from_replica"]["pid"] == killed["pid"]
        assert hop["to_replica"] == r["tool_replica"] and r["tool_replica"]["replica"] != killed["replica"]
        assert "lost" in hop["reason"] and r["n_tool_calls"] == 2  # replayed from the start: both calls again
    # every episode that started after the kill ran on a survivor; one that kept the dead replica had
    # started before and made its tool calls before it died (its last turn needs no tool)
    assert all(r["tool_replica"]["replica"] != killed["replica"] for r in records if r["started_at"] > killed["at"])
    assert all(r["started_at"] < killed["at"] for r in records if r["tool_replica"]["replica"] == killed["replica"])
    assert any(r["started_at"] > killed["at"] for r in records)  # the kill was mid-rollout
    # the replicas stopped with the rollout: none alive, the survivors withdrew their files
    assert not any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in pids)
    assert not replica_processes(out)
    assert (replica_dir(out) / "done").exists()
    left = [p.name for p in replica_dir(out).glob("replica-*.json")]
    # a killed replica's file stays (the shard coped with it); a frozen one, woken by SIGCONT+SIGTERM, withdrew it
    assert left == ([f"replica-{killed['replica']}.json"] if how == signal.SIGKILL else [])
    # the token is in its 0600 file and nowhere else the rollout wrote
    token = read_token(out)
    leaks = [p for p in out.rglob("*") if p.is_file() and p.name != ".token" and token.encode() in p.read_bytes()]
    assert not leaks


def test_when_every_replica_is_gone_episodes_fail_recorded_and_a_rerun_finishes_them(tmp_path: Path) -> None:
    with serve_in_thread(sql_policy, latency_s=0.05) as (url, _):
        out = replica_rollout(tmp_path, url, replicas=1, test=12, concurrency=3, wait_s=3)

        def kill_the_only_one(trace: dict) -> None:
            if len(shard_records(out)) == 2:
                (info,) = read_replicas(out, read_token(out))
                os.kill(info["pid"], signal.SIGKILL)

        # wait_s (3 s) is how long a shard waits for a replica to come back; its start-up is awaited here
        with tool_replicas(out, 1, "local"):
            asyncio.run(_wait_healthy(out, read_token(out)))
            first = run_shard(out, Shard(0, 1), on_episode=kill_the_only_one)
        lost = [r for r in shard_records(out) if r["status"] == "error"]
        # no episode hangs or vanishes: each has one record, the lost ones a retryable replica error
        assert (
            first["ran"] == 12 and len(lost) == first["error"] >= 12 - 2 - 3
        )  # (3 in flight may be past their tool calls)
        assert all(
            r["error"]["kind"] in ("replica_lost", "tool_server") and r["error"]["retryable"] and r["score"] is None
            for r in lost
        )
        with tool_replicas(out, 1, "local"):  # the rerun (a new replica run) redoes only those
            asyncio.run(_wait_healthy(out, read_token(out)))
            second = run_shard(out, Shard(0, 1))
    assert second["skipped"] == 12 - len(lost) and second["ok"] == len(lost)
    from ptbench.bootcamp.rollout.merge import merge

    summary = merge(out)
    assert summary["episodes"] == 12 and summary["missing"] == 0 and summary["superseded_records"] == len(lost)
    assert not replica_processes(out)


def test_replica_refuses_requests_without_the_token_and_starts_only_with_one(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    cmd = [sys.executable, "-m", "ptbench", "bootcamp", "serve-tools", "--dir", str(out), "--replica", "0"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and "no tool-server token" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert not list(replica_dir(out).glob("replica-*.json"))  # a replica without a token never announces itself
    new_run(out)
    (replica_dir(out) / ".token").chmod(0o644)  # readable by anyone: not a secret any more
    with pytest.raises(UserError, match="readable by other users"):
        read_token(out)
    with tool_replicas(out, 1, "local"):  # a new run: a new token, 0600
        token = read_token(out)
        asyncio.run(_wait_healthy(out, token))
        (info,) = read_replicas(out, token)
        assert "token" not in json.dumps(info).replace("token_fingerprint", "")
        assert health(info["url"])[0] == 401
        assert health(info["url"], "x" * 43)[0] == 401  # signed with another token
        assert health(info["url"], header=f"Bearer {token}")[0] == 401  # the token itself is never what is sent
        stale = int(time.time()) - 400
        assert (
            health(info["url"], header=f"PTB-HMAC {stale}:{_mac(token, stale, 'GET', '/health')}")[0] == 401
        )  # replayed too late
        other_path = sign(token, "GET", "/v1/instances")
        assert health(info["url"], header=other_path)[0] == 401  # a signature is for one method and path
        body = json.dumps({"tool": "sql_query", "params": {}, "identity": {}}).encode()
        # a /health signature (what a process on a dead replica's port could catch) does not create instances
        req = urllib.request.Request(
            info["url"] + "/v1/instances",
            data=body,
            headers={"Content-Type": "application/json", "Authorization": sign(token, "GET", "/health")},
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(req, timeout=5)
        assert refused.value.code == 401
        status, ok = health(info["url"], token)
        assert status == 200 and ok["replica"] == 0 and ok["instances"] == 0  # the refused create made nothing
        (row,) = replica_status_rows(out)  # what `ptbench status OUT` adds below the shards
        assert row.trial_id == "tool-replica-0" and row.state == "running" and row.metric == info["url"]
        # a shard of another run (another token) does not even see this replica
        assert read_replicas(out, "y" * 43) == []
        # an announcement written by another user is not trusted (we would sign requests for their server)
        forged = replica_dir(out) / "replica-7.json"
        forged.write_text(json.dumps({**info, "replica": 7, "url": "http://127.0.0.1:9"}))
        if os.getuid() == 0:
            os.chown(forged, 65534, 65534)
            assert [r["replica"] for r in read_replicas(out, token)] == [0]
        forged.unlink()
        # a newer run of the rollout (a new token) takes the folder: this replica leaves by itself
        # at its next heartbeat (10 s) instead of overwriting the new replica 0's announcement
        new_run(out)
        deadline = time.monotonic() + 60
        while replica_processes(out) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not replica_processes(out), "a replica of an older run kept running"
        assert "done" not in [p.name for p in replica_dir(out).iterdir()]  # it left on the token, not on `done`
    assert not replica_processes(out)
    assert [r.state for r in replica_status_rows(out)] == ["ended"]


async def _wait_healthy(out: Path, token: str) -> None:
    pool = ReplicaPool(out, token, wait_s=60)
    try:
        await pool.wait_healthy()
    finally:
        await pool.aclose()


def test_assignment_is_sticky_and_a_dead_replica_moves_only_its_episodes(tmp_path: Path) -> None:
    pool = ReplicaPool(tmp_path, "t" * 43)
    pool.healthy = {i: Replica(index=i, url=f"http://h:{i}", pid=100 + i, started_at=1.0) for i in range(3)}
    keys = [f"sql_explore/test/{i}" for i in range(300)]
    before = {k: pool.pick(k).index for k in keys}
    assert before == {k: pool.pick(k).index for k in keys}  # stable
    spread = [list(before.values()).count(i) for i in range(3)]
    assert min(spread) > 60, spread  # every replica gets a fair share
    del pool.healthy[1]
    after = {k: pool.pick(k).index for k in keys}
    assert all(after[k] == before[k] for k in keys if before[k] != 1)  # survivors keep theirs
    assert all(after[k] in (0, 2) for k in keys)


def test_rollout_cli_runs_replicas_and_refuses_what_cannot_work(tmp_path: Path) -> None:
    cfg = remote_sql_config(tmp_path, test=6)
    base = [sys.executable, "-m", "ptbench", "bootcamp", "rollout", "--model", "scripted"]
    plain = tmp_path / "plain.yaml"
    plain.write_text((CAMPAIGNS / "sql_explore.yaml").read_text())
    bad = subprocess.run(
        [
            *base,
            str(plain),
            "--endpoint",
            "http://127.0.0.1:9/v1",
            "--out",
            str(tmp_path / "bad"),
            "--tool-replicas",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and "remote: true" in bad.stderr and not (tmp_path / "bad").exists()
    both = subprocess.run(
        [
            *base,
            str(cfg),
            "--endpoint",
            "http://127.0.0.1:9/v1",
            "--out",
            str(tmp_path / "bad"),
            "--tool-replicas",
            "2",
            "--tool-server",
            "http://127.0.0.1:9",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (
        both.returncode == 2 and "pass one" in both.stderr and not (tmp_path / "bad").exists()
    )  # HTCondor: test_htcondor.py
    # --render: the replicas' sbatch script beside the shards', one array from the same backend.options
    backend = tmp_path / "backend.yaml"
    backend.write_text(
        json.dumps(
            {
                "backend": {
                    "name": "slurm",
                    "options": {"account": "proj42", "gres": "gpu:h100:1", "setup": ["module load sim"]},
                }
            }
        )
    )
    shown = subprocess.run(
        [
            *base,
            str(cfg),
            "--endpoint",
            "http://127.0.0.1:9/v1",
            "--out",
            str(tmp_path / "render"),
            "--tool-replicas",
            "3",
            "--backend-config",
            str(backend),
            "--render",
            "--slurm-time",
            "30",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    script = (tmp_path / "render" / "submit" / "tool-servers.sh").read_text()
    for line in (
        "#SBATCH --array=0-2%3",
        "#SBATCH --account=proj42",
        "#SBATCH --gres=gpu:h100:1",
        "#SBATCH --time=30",
        "module load sim",
        "#SBATCH --job-name=ptbench-tools-render",
        "serve-tools --dir",
        str(tmp_path / "render" / "tool-servers" / "slurm"),
    ):
        assert line in script, line
    assert (tmp_path / "render" / "submit" / "slurm.sh").exists()
    with serve_in_thread(sql_policy) as (url, _):
        out = tmp_path / "cli"
        res = subprocess.run(
            [*base, str(cfg), "--endpoint", url, "--out", str(out), "--shards", "2", "--tool-replicas", "2"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert res.returncode == 0, res.stdout + res.stderr
    merged = [json.loads(x) for x in (out / "merged" / "traces.jsonl").read_text().splitlines()]
    assert len(merged) == 6 and all(
        r["correct"] and r["tool_replica"]["replica"] in (0, 1) and r["restarts"] == [] for r in merged
    )
    assert not replica_processes(out)


def test_local_replicas_die_with_a_killed_rollout(tmp_path: Path) -> None:
    cfg = remote_sql_config(tmp_path, test=8)
    out = tmp_path / "out"
    with serve_in_thread(sql_policy, latency_s=5.0) as (url, _):  # episodes far from done when the rollout dies
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ptbench",
                "bootcamp",
                "rollout",
                str(cfg),
                "--endpoint",
                url,
                "--model",
                "scripted",
                "--out",
                str(out),
                "--tool-replicas",
                "2",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 120
            while len(list(replica_dir(out).glob("replica-*.json"))) < 2:
                assert proc.poll() is None and time.monotonic() < deadline, "the replicas never announced themselves"
                time.sleep(0.1)
            assert len(replica_processes(out)) == 2
            proc.kill()  # no finally, no `done`, no cancel: only the kernel's parent-death signal is left
            proc.wait()
            deadline = time.monotonic() + 30
            while replica_processes(out) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert not replica_processes(out)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for p in psutil.process_iter(["cmdline"]):  # the orphaned shard (resumable by design) is ours to end
                if str(out) in " ".join(p.info["cmdline"] or []):
                    p.kill()
                    p.wait(10)
