"""The shard's side of tool-server replicas: find the healthy ones, keep each episode on one, and
move an episode whose replica died to another, restarting it from the start.

Assignment is rendezvous hashing of (episode, replica index) over the healthy replicas: stable for
an episode, and a replica that dies moves only its own episodes. An episode's tool state lives on
its replica, so an episode that lost its replica cannot continue elsewhere: `play_episode` plays it
again from the first turn on the replica the hash now picks, and the one record it finally yields
says so in `restarts` (reason, from/to replica, the turns and requests thrown away). The discarded
attempt writes nothing, so each episode is still recorded exactly once.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ptbench.bootcamp.api import Identity, Tool, ToolError, ToolResult, canonical_json
from ptbench.bootcamp.serving import replicas

REPLICA_LOST = "replica_lost"
EPISODE: ContextVar[str | None] = ContextVar("ptbench_bootcamp_episode", default=None)
"""The episode the current task plays (set by `play_episode`): its key for the sticky assignment."""


class ReplicaLost(ToolError):
    def __init__(self, message: str) -> None:
        super().__init__(message, kind=REPLICA_LOST)


@dataclass(frozen=True)
class Replica:
    index: int
    url: str
    pid: int
    started_at: float
    host: str | None = None
    job_id: str | None = None

    @property
    def generation(self) -> tuple[int, int, float]:
        """A replica the scheduler restarted is a new generation: it holds none of the old state."""
        return (self.index, self.pid, self.started_at)

    def describe(self) -> dict[str, Any]:
        return {"replica": self.index, "job_id": self.job_id, "host": self.host, "pid": self.pid}


def _parse(info: dict[str, Any]) -> Replica | None:
    try:
        return Replica(
            index=info["replica"],
            url=str(info["url"]).rstrip("/"),
            pid=int(info["pid"]),
            started_at=float(info["started_at"]),
            host=info.get("host"),
            job_id=info.get("job_id"),
        )
    except (KeyError, TypeError, ValueError):
        return None  # not an announcement this version wrote: never trusted


class ReplicaPool:
    def __init__(
        self,
        out: str | Path,
        token: str,
        *,
        wait_s: float = 300.0,
        health_timeout_s: float = 5.0,
        refresh_s: float = 5.0,
        max_restarts: int = 3,
    ) -> None:
        self.out = Path(out)
        self._token = token
        self.wait_s = wait_s
        self.health_timeout_s = health_timeout_s
        self.refresh_s = refresh_s
        self.max_restarts = max_restarts
        self.healthy: dict[int, Replica] = {}
        self.dead: set[tuple[int, int, float]] = set()
        self.bindings: dict[str, Replica] = {}
        self._refreshed = 0.0
        self._gave_up = False
        self._session: Any = None

    def session(self) -> Any:
        import aiohttp

        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession()
        return self._session

    def auth(self, method: str, path: str) -> dict[str, str]:
        return {"Authorization": replicas.sign(self._token, method, path)}

    async def is_healthy(self, r: Replica) -> bool:
        """`/health` answers 200 with our token, as the same replica (index, pid, start) as announced."""
        import aiohttp

        try:
            timeout = aiohttp.ClientTimeout(total=self.health_timeout_s)
            async with self.session().get(
                r.url + "/health", timeout=timeout, headers=self.auth("GET", "/health")
            ) as resp:
                body = await resp.json(content_type=None) if resp.status == 200 else {}
        except (TimeoutError, aiohttp.ClientError, ValueError):
            return False
        return (
            isinstance(body, dict)
            and body.get("replica") == r.index
            and body.get("pid") == r.pid
            and body.get("started_at") == r.started_at
        )

    async def refresh(self, *, force: bool = False) -> None:
        """Read the announcements and health-check replicas not seen before (new or restarted ones)."""
        if not force and time.monotonic() - self._refreshed < self.refresh_s:
            return
        self._refreshed = time.monotonic()
        found = [r for r in map(_parse, replicas.read_replicas(self.out, self._token)) if r is not None]
        fresh = [r for r in found if r.generation not in self.dead and self.healthy.get(r.index) != r]
        checks = await asyncio.gather(*(self.is_healthy(r) for r in fresh))
        for r, ok in zip(fresh, checks, strict=True):
            if ok:
                self.healthy[r.index] = r
        announced = {r.generation for r in found}
        for index, r in list(self.healthy.items()):
            if r.generation not in announced:  # withdrawn: the replica stopped cleanly
                del self.healthy[index]

    async def wait_healthy(self, wait_s: float | None = None, *, want: int = 1, grace_s: float = 30.0) -> None:
        """Return once `want` replicas are healthy, or at least one is and `grace_s` passed since it
        came (the scheduler may still be starting the others, or never place them)."""
        limit = self.wait_s if wait_s is None else wait_s
        deadline = time.monotonic() + limit
        first: float | None = None
        while True:
            await self.refresh(force=True)
            if self.healthy:
                self._gave_up = False
                first = first or time.monotonic()
            elif self._gave_up:
                limit = 0  # waited in vain once already: the episodes left fail at once, not one wait each
            if len(self.healthy) >= want or (first is not None and time.monotonic() - first >= grace_s):
                return
            if time.monotonic() > deadline or limit == 0:
                if self.healthy:
                    return
                self._gave_up = True
                raise ToolError(
                    f"no healthy tool-server replica in {replicas.replica_dir(self.out)} (waited "
                    f"{self.wait_s if wait_s is None else wait_s:g} s; are the replica jobs running? see their logs "
                    "there)",
                    kind="tool_server",
                )
            await asyncio.sleep(0.5)

    def pick(self, key: str) -> Replica:
        def weight(r: Replica) -> bytes:
            return hashlib.sha256(f"{key}\0{r.index}".encode()).digest()

        return max(self.healthy.values(), key=weight)

    async def assign(self, key: str) -> Replica:
        """The episode's replica: the one it already uses (sticky), else the hash's pick."""
        bound = self.bindings.get(key)
        if bound is not None:
            return bound
        await self.refresh()
        if not self.healthy:
            await self.wait_healthy()
        self.bindings[key] = chosen = self.pick(key)
        return chosen

    async def check(self, r: Replica, why: str) -> None:
        """After a failed call: a replica that no longer answers as itself is dead; raise ReplicaLost."""
        if self.healthy.get(r.index) == r and await self.is_healthy(r):
            return
        self.dead.add(r.generation)
        if self.healthy.get(r.index) == r:
            del self.healthy[r.index]
        raise ReplicaLost(f"tool-server replica {r.index} (job {r.job_id or '-'}, pid {r.pid}) lost: {why}")

    async def play_episode(self, key: str, play: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
        """Play an episode on its replica; if the replica dies, play it again from the start on another."""
        ctx = EPISODE.set(key)
        restarts: list[dict[str, Any]] = []
        try:
            while True:
                trace = await play()
                used = self.bindings.pop(key, None)
                if restarts:
                    restarts[-1]["to_replica"] = used.describe() if used else None
                error = trace.get("error") or {}
                if error.get("kind") != REPLICA_LOST or len(restarts) >= self.max_restarts:
                    break
                try:
                    await self.wait_healthy()
                except ToolError:
                    break  # none left: the record keeps the retryable replica_lost error; a rerun redoes it
                restarts.append(
                    {
                        "reason": error.get("message"),
                        "from_replica": used.describe() if used else None,
                        "at": time.time(),
                        "discarded_turns": trace.get("turns", 0),
                        "discarded_requests": trace.get("requests", 0),
                        "discarded_s": trace.get("latency_s", 0.0),
                    }
                )
        finally:
            EPISODE.reset(ctx)
        trace["tool_replica"] = used.describe() if used else None
        trace["restarts"] = restarts
        return trace

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()


class PooledRemoteTool(Tool):
    """A registered tool run on the rollout's replicas; state is (replica, instance id). It applies
    the tool's `timeout_s` itself: a call past it is a timeout the model sees when the replica still
    answers `/health`, and a lost replica (the episode is replayed elsewhere) when it does not."""

    enforces_timeout = True

    def __init__(self, local: Tool, pool: ReplicaPool, *, params: dict[str, Any], timeout_s: float) -> None:
        super().__init__(**params)
        self.name = local.name  # type: ignore[misc]  # a proxy is named per instance (a ClassVar on tools)
        self._schema = local.schema()
        self.pool = pool
        self.timeout_s = timeout_s

    def schema(self) -> dict[str, Any]:
        return self._schema

    async def _request(self, r: Replica, method: str, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        import aiohttp

        if r.generation in self.pool.dead:  # another episode already found it dead: do not wait on it again
            raise ReplicaLost(
                f"tool-server replica {r.index} (job {r.job_id or '-'}, pid {r.pid}) lost earlier in this shard"
            )
        timeout = aiohttp.ClientTimeout(total=self.timeout_s, sock_connect=min(5.0, self.timeout_s))
        try:
            async with self.pool.session().request(
                method, r.url + path, json=body, timeout=timeout, headers=self.pool.auth(method, path)
            ) as resp:
                payload = await resp.json(content_type=None)
                status = resp.status
        except TimeoutError:
            await self.pool.check(r, f"no answer within {self.timeout_s:g} s, and no answer to /health")
            return 504, {"detail": f"tool call took longer than {self.timeout_s:g} s"}
        except (aiohttp.ClientError, ValueError) as exc:
            await self.pool.check(r, f"{type(exc).__name__}: {exc}")
            raise ToolError(
                f"tool-server replica {r.index} failed: {type(exc).__name__}: {exc}", kind="tool_server"
            ) from None
        if status == 401:
            await self.pool.check(r, "it refused this rollout's token")
        return status, payload

    async def create(self, identity: Identity) -> Any:
        r = await self.pool.assign(EPISODE.get() or canonical_json(identity))
        status, payload = await self._request(
            r, "POST", "/v1/instances", {"tool": self.name, "params": self.params, "identity": identity}
        )
        if status == 504:
            raise ToolError(
                f"tool-server replica {r.index}: creating '{self.name}' took longer than {self.timeout_s:g} s",
                kind="tool_server",
            )
        if status != 200:
            raise ToolError(
                f"tool-server replica {r.index} could not create '{self.name}': HTTP {status} {payload}",
                kind="tool_server",
            )
        return (r, payload["instance_id"])

    async def execute(self, state: Any, arguments: dict[str, Any]) -> ToolResult:
        r, iid = state
        status, payload = await self._request(r, "POST", f"/v1/instances/{iid}/execute", {"arguments": arguments})
        if status == 504:
            return ToolResult(text=f"error: {payload.get('detail', 'tool call timed out')}", error="timeout")
        if status == 404:  # the replica restarted (or reaped the instance): the episode's state is gone
            raise ReplicaLost(f"tool-server replica {r.index} no longer holds this episode's '{self.name}' state")
        if status != 200:
            raise ToolError(
                f"tool-server replica {r.index} failed on '{self.name}': HTTP {status} {payload}", kind="tool_server"
            )
        return ToolResult.from_wire(payload)

    async def release(self, state: Any) -> None:
        r, iid = state
        try:
            await self._request(r, "DELETE", f"/v1/instances/{iid}", {})
        except ToolError:
            pass  # the replica's idle TTL reclaims it, or it is gone with it

    async def aclose(self) -> None:
        await self.pool.aclose()
