"""A rollout directory and the shard runner that fills it.

```
OUT/rollout.json            settings every shard reads (config, endpoint, model, split, limits)
OUT/data/                   the generated dataset, unless --data pointed elsewhere
OUT/shards/shard-i-of-N.jsonl   one trace line per finished episode, appended as each one ends
OUT/shards/shard-i-of-N.done.json   the shard's counts once it finished its rows
OUT/toolserver.json         where the tool server listens (written by `serve-tools --dir OUT`)
OUT/tool-servers/           the rollout's tool-server replicas (`--tool-replicas N`, see replicas.py)
```
A shard is one command line, `python -m ptbench bootcamp rollout-shard OUT --shard i/N`, so any
scheduler can run it. It skips rows that already have a final record in any shard file, so a
killed or requeued shard (or a rerun with a different shard count) redoes only what is missing.
"""

from __future__ import annotations

import asyncio
import gc
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ptbench.bootcamp.api import ToolError
from ptbench.bootcamp.config import BootcampConfig
from ptbench.bootcamp.data.datagen import Shard, load_rows
from ptbench.bootcamp.environment import Environment, build_environment
from ptbench.bootcamp.rollout.client import ChatClient
from ptbench.bootcamp.rollout.episode import run_episode
from ptbench.bootcamp.rollout.traces import is_final
from ptbench.bootcamp.serving.replica_pool import PooledRemoteTool, ReplicaPool
from ptbench.bootcamp.serving.replicas import read_token
from ptbench.core import fastjson
from ptbench.core.errors import UserError
from ptbench.core.files import atomic_write_json, read_jsonl
from ptbench.core.retry import RetryPolicy

SETTINGS = "rollout.json"


class RolloutSettings(BaseModel):
    """What every shard of one rollout agrees on; written once by `rollout`, read by each shard."""

    model_config = ConfigDict(extra="forbid")

    config: BootcampConfig
    config_hash: str
    data_dir: str
    split: str
    endpoint: str
    model: str
    api_key_env: str | None = None
    """Name of the environment variable holding the API key; the key itself is never written."""
    concurrency: int = 64
    request_timeout_s: float = 120.0
    max_retries: int = 6
    limit: int | None = None
    tool_server: str | None = None
    tool_replicas: int | None = None
    """From `rollout --tool-replicas N`: remote tools run on N replicas found in OUT/tool-servers."""
    tool_replica_wait_s: float = 300.0
    """How long a shard waits for a healthy replica (the scheduler may still be starting them)."""
    extra_body: dict[str, Any] = {}
    """From `rollout --extra-body JSON`: merged over the config's `sampling.extra_body`."""


def write_settings(out: Path, settings: RolloutSettings, *, force: bool = False) -> None:
    path = out / SETTINGS
    if path.is_file() and not force:
        old = read_settings(out)
        for field in ("config_hash", "model", "split", "data_dir", "limit", "extra_body"):
            if getattr(old, field) != getattr(settings, field):
                raise UserError(
                    f"{out} already holds a rollout with a different {field} ({getattr(old, field)!r} -> "
                    f"{getattr(settings, field)!r}); use another --out, or pass --force to mix them (traces keep their "
                    "config_hash)"
                )
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, settings.model_dump(mode="json"))


def read_settings(out: str | Path) -> RolloutSettings:
    path = Path(out) / SETTINGS
    if not path.is_file():
        raise UserError(
            f"{path}: not a rollout directory (start one with `ptbench bootcamp rollout CONFIG --out {out}`)"
        )
    return RolloutSettings.model_validate(fastjson.loads(path.read_bytes()))


def shard_trace_path(out: Path, shard: Shard) -> Path:
    return out / "shards" / f"{shard.tag}.jsonl"


def repair_torn_tail(path: Path) -> None:
    """A shard killed mid-write can leave half a line; cut it so the next append starts clean."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    if size == 0:
        return
    with open(path, "r+b") as fh:
        fh.seek(max(0, size - 1))
        if fh.read(1) == b"\n":
            return
        fh.seek(0)
        data = fh.read()
        fh.truncate(data.rfind(b"\n") + 1)


def finished_records(out: Path) -> tuple[set[str], dict[str, int]]:
    """(sample ids with a final record in any shard file, attempts so far per sample id)."""
    done: set[str] = set()
    attempts: dict[str, int] = {}
    for path in sorted((out / "shards").glob("shard-*.jsonl")):
        for rec in read_jsonl(path):
            sid = rec.get("sample_id")
            if sid is None:
                continue
            attempts[sid] = attempts.get(sid, 0) + 1
            if is_final(rec):
                done.add(sid)
    return done, attempts


def _environment(settings: RolloutSettings, out: Path) -> tuple[Environment, ReplicaPool | None]:
    env = build_environment(settings.config)
    remote = [t for t in settings.config.tools if t.remote]
    if remote and settings.tool_replicas:
        pool = ReplicaPool(out, read_token(out), wait_s=settings.tool_replica_wait_s)
        for ref in remote:
            env.tools[ref.name] = PooledRemoteTool(
                env.tools[ref.name], pool, params=ref.params, timeout_s=ref.timeout_s
            )
        return env, pool
    if remote:
        from ptbench.bootcamp.serving.toolserver import RemoteTool, find_tool_server

        url = settings.tool_server or find_tool_server(out)
        for ref in remote:
            env.tools[ref.name] = RemoteTool(env.tools[ref.name], url, params=ref.params, timeout_s=ref.timeout_s)
    return env, None


def run_shard(
    out_dir: str | Path, shard: Shard, *, on_episode: Callable[[dict[str, Any]], None] | None = None
) -> dict[str, Any]:
    """Run this shard's unfinished rows to the end; returns (and writes) the shard's counts."""
    # Reading the rows too: they are thousands of acyclic containers that all stay alive.
    with _young_collections_every(50_000):
        return _run_shard(Path(out_dir), shard, on_episode)


def _run_shard(out: Path, shard: Shard, on_episode: Callable[[dict[str, Any]], None] | None) -> dict[str, Any]:
    settings = read_settings(out)
    rows = load_rows(settings.data_dir, settings.split)
    if settings.limit is not None:
        rows = rows[: settings.limit]
    mine = rows[shard.index :: shard.count]
    (out / "shards").mkdir(parents=True, exist_ok=True)
    path = shard_trace_path(out, shard)
    repair_torn_tail(path)
    done, attempts = finished_records(out)
    todo = [r for r in mine if r["extra_info"]["sample_id"] not in done]
    env, pool = _environment(settings, out)
    start = time.time()
    counts = _run_loop(run_rows(env, settings, todo, path, attempts, on_episode, pool))
    counts.update(shard=shard.tag, rows=len(mine), skipped=len(mine) - len(todo), wall_s=round(time.time() - start, 3))
    atomic_write_json(out / "shards" / f"{shard.tag}.done.json", counts)
    return counts


@contextmanager
def _young_collections_every(allocations: int) -> Iterator[None]:
    """The collector's youngest generation collected every `allocations` container allocations
    instead of every 700 (Python's default), then put back. An episode's objects (messages, bodies,
    the trace) are acyclic and freed by reference counting; at 700 each collection walked the young
    objects of every episode in flight, over and over: 4% of a shard's CPU (docs/bootcamp.md,
    "Rollout throughput"). Cycles (a failed request's traceback) are still collected, later."""
    old = gc.get_threshold()
    gc.set_threshold(max(old[0], allocations), *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)


def _run_loop(coro: Any) -> Any:
    try:
        import uvloop  # optional: a faster event loop, ~30% less CPU per model turn

        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            return runner.run(coro)
    except ImportError:
        return asyncio.run(coro)


async def run_rows(
    env: Environment,
    settings: RolloutSettings,
    rows: list[dict[str, Any]],
    trace_path: Path,
    attempts: dict[str, int] | None = None,
    on_episode: Callable[[dict[str, Any]], None] | None = None,
    pool: ReplicaPool | None = None,
) -> dict[str, Any]:
    """Play `rows` with at most `settings.concurrency` episodes in flight, appending one trace line per
    episode (with a replica `pool`, an episode whose replica dies is replayed on another first)."""
    attempts = attempts or {}
    api_key = os.environ.get(settings.api_key_env) if settings.api_key_env else None
    counts = {"ran": 0, "ok": 0, "error": 0, "retries": 0, "requests": 0, "restarts": 0}
    it = iter(rows)
    fd = os.open(trace_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    sampling = settings.config.sampling.model_dump()
    extra_body = {**sampling.pop("extra_body"), **settings.extra_body}
    client = ChatClient(
        settings.endpoint,
        settings.model,
        api_key=api_key,
        concurrency=settings.concurrency,
        timeout_s=settings.request_timeout_s,
        retry=RetryPolicy(max_retries=settings.max_retries),
        sampling=sampling,
        extra_body=extra_body,
    )
    config_hash = settings.config_hash

    async def worker() -> None:
        for row in it:
            sid = row["extra_info"]["sample_id"]

            def play(row: dict[str, Any] = row, sid: str = sid) -> Any:
                return run_episode(env, row, client, config_hash=config_hash, attempt=attempts.get(sid, 0) + 1)

            trace = await (pool.play_episode(sid, play) if pool is not None else play())
            counts["restarts"] += len(trace.get("restarts") or ())
            # One write(2) per episode: a killed shard loses at most the episodes in flight.
            os.write(fd, fastjson.dumps_line(trace))
            counts["ran"] += 1
            counts[trace["status"]] += 1
            counts["requests"] += trace["requests"]
            counts["retries"] += sum(trace["retries"].values())
            if on_episode is not None:
                on_episode(trace)

    try:
        if pool is not None and rows:  # spread from the start: wait (a little) for all of them
            try:
                await pool.wait_healthy(want=settings.tool_replicas or 1)
            except ToolError as exc:
                raise UserError(f"{trace_path.name}: {exc}") from None
        async with client:
            await asyncio.gather(*(worker() for _ in range(max(1, min(settings.concurrency, len(rows))))))
    finally:
        os.close(fd)
        for tool in env.tools.values():
            await tool.aclose()
    return counts
