"""A tool server for heavy tools shared by many shards (aiohttp, as the gateway), and the client-side proxy.

Protocol (JSON over HTTP):
  GET    /health                         -> {"status": "ok", "instances": n, "tools": [...]}
  POST   /v1/instances                   {"tool", "params", "identity"} -> {"instance_id"}
  POST   /v1/instances/{id}/execute      {"arguments"} -> {"text", "step_reward", "metrics", "error"}
  DELETE /v1/instances/{id}
Each execute has a server-side time limit (HTTP 504 past it); instances idle longer than the TTL are
released, so shards that die never leak tool state. The server writes `toolserver.json` (its URL)
into the campaign directory once it listens; shards read it there. A replica of a rollout
(`--replica I`, see replicas.py) announces itself in `tool-servers/replica-I.json` instead, requires the
rollout's token on every request (signed with it, see replicas.py; 401 otherwise), and exits when the
rollout writes `tool-servers/done`, every one of its `shards` finished (HTCondor, where nobody waits),
or nothing called it for `idle_exit_s`.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from aiohttp import web
from pydantic import BaseModel, ValidationError

from ptbench.bootcamp.api import TOOLS, Identity, Tool, ToolError, ToolResult, canonical_json
from ptbench.bootcamp.serving import replicas
from ptbench.core.errors import UserError
from ptbench.core.files import atomic_write_json
from ptbench.core.stopsignals import StopSignals

SERVER_FILE = "toolserver.json"


class CreateBody(BaseModel):
    tool: str
    params: dict[str, Any] = {}
    identity: dict[str, Any]


class ExecuteBody(BaseModel):
    arguments: dict[str, Any]


class _Refused(Exception):
    """An HTTP error answer: {"detail": ...} with this status."""

    def __init__(self, status: int, detail: Any) -> None:
        super().__init__(str(detail))
        self.status, self.detail = status, detail


B = TypeVar("B", bound=BaseModel)


async def _body(request: web.Request, model: type[B]) -> B:
    try:
        return model.model_validate_json(await request.read())
    except ValidationError as exc:
        raise _Refused(422, exc.errors(include_url=False, include_context=False, include_input=False)) from None


@dataclass
class ServerState:
    last_request: float = field(default_factory=time.monotonic)


STATE = web.AppKey("state", ServerState)


def create_app(
    *,
    request_timeout_s: float = 60.0,
    idle_ttl_s: float = 600.0,
    imports: list[str] | None = None,
    token: str | None = None,
    identity: dict[str, Any] | None = None,
) -> web.Application:
    """The app; with `token`, every request (health too) must carry it, so only the rollout that
    owns the replica can use it or mistake something else for it."""
    import importlib

    for mod in imports or []:
        importlib.import_module(mod)

    tools: dict[str, Tool] = {}
    instances: dict[str, dict[str, Any]] = {}
    state = ServerState()

    async def reaper() -> None:
        while True:
            await asyncio.sleep(min(30.0, idle_ttl_s / 4))
            now = time.monotonic()
            for iid in [i for i, inst in instances.items() if now - inst["used"] > idle_ttl_s and not inst["busy"]]:
                inst = instances.pop(iid)
                try:
                    await inst["tool"].release(inst["state"])
                except Exception:
                    pass

    async def reaper_ctx(app: web.Application) -> AsyncIterator[None]:
        task = asyncio.create_task(reaper())
        yield
        task.cancel()

    @web.middleware
    async def authorize(request: web.Request, handler: Any) -> web.StreamResponse:
        if token is not None and not replicas.verify(
            token, request.headers.get("authorization", ""), request.method, request.path
        ):
            return web.json_response({"detail": "missing, wrong or expired signature"}, status=401)
        state.last_request = time.monotonic()
        try:
            return await handler(request)
        except _Refused as exc:
            return web.json_response({"detail": exc.detail}, status=exc.status)

    async def health(request: web.Request) -> web.Response:
        return web.json_response(
            {
                "status": "ok",
                "instances": len(instances),
                "tools": TOOLS.names(),
                "pid": os.getpid(),
                **(identity or {}),
            }
        )

    async def create(request: web.Request) -> web.Response:
        body = await _body(request, CreateBody)
        key = f"{body.tool}:{canonical_json(body.params)}"
        if key not in tools:
            try:
                tools[key] = TOOLS.get(body.tool)(**body.params)
            except UserError as exc:
                raise _Refused(404, str(exc)) from None
        tool = tools[key]
        try:
            tool_state = await asyncio.wait_for(tool.create(body.identity), request_timeout_s)
        except TimeoutError:
            raise _Refused(504, f"create took longer than {request_timeout_s:g} s") from None
        iid = uuid.uuid4().hex
        instances[iid] = {"tool": tool, "state": tool_state, "used": time.monotonic(), "busy": False}
        return web.json_response({"instance_id": iid})

    async def execute(request: web.Request) -> web.Response:
        body = await _body(request, ExecuteBody)
        iid = request.match_info["iid"]
        inst = instances.get(iid)
        if inst is None:
            raise _Refused(404, f"no instance {iid} (released, expired, or the server restarted)")
        inst["busy"] = True
        try:
            result = await asyncio.wait_for(inst["tool"].execute(inst["state"], body.arguments), request_timeout_s)
        except TimeoutError:
            raise _Refused(504, f"tool call took longer than {request_timeout_s:g} s") from None
        except Exception as exc:  # a tool bug is the model's problem to see, as it is for local tools
            return web.json_response(
                {
                    "text": f"error: tool failed: {type(exc).__name__}: {exc}",
                    "step_reward": 0.0,
                    "metrics": {},
                    "error": "tool_exception",
                }
            )
        finally:
            inst["busy"] = False
            inst["used"] = time.monotonic()
        return web.json_response(
            {"text": result.text, "step_reward": result.step_reward, "metrics": result.metrics, "error": result.error}
        )

    async def release(request: web.Request) -> web.Response:
        inst = instances.pop(request.match_info["iid"], None)
        if inst is not None:
            await inst["tool"].release(inst["state"])
        return web.json_response({"released": inst is not None})

    app = web.Application(middlewares=[authorize], client_max_size=64 * 1024 * 1024)
    app[STATE] = state
    app.cleanup_ctx.append(reaper_ctx)
    app.router.add_get("/health", health)
    app.router.add_post("/v1/instances", create)
    app.router.add_post("/v1/instances/{iid}/execute", execute)
    app.router.add_delete("/v1/instances/{iid}", release)
    return app


def serve_until_stopped(
    stop: StopSignals,
    directory: str | Path | None,
    *,
    host: str,
    port: int,
    advertise: str | None,
    request_timeout_s: float,
    idle_ttl_s: float,
    imports: list[str] | None,
    replica: int | None = None,
    idle_exit_s: float | None = None,
    shards: int | None = None,
) -> None:
    """Run the server until `stop` (entered by the caller before it imported this module) records
    SIGINT/SIGTERM; once listening, write `<directory>/toolserver.json` (or, as replica I of a rollout,
    `<directory>/tool-servers/replica-I.json`)."""
    token = None
    if replica is not None:
        if directory is None:
            raise UserError("serve-tools --replica: pass --dir, the rollout folder the replica belongs to")
        token = replicas.read_token(directory)  # no token, no replica: fail closed
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    bound = sock.getsockname()[1]
    # A replica is reached by the node name the scheduler knows (getfqdn can say "localhost").
    name = advertise or (
        (socket.gethostname() if replica is not None else socket.getfqdn()) if host in ("0.0.0.0", "") else host
    )
    url = f"http://{name}:{bound}"
    started = time.time()
    ident = {"replica": replica, "started_at": started} if replica is not None else None
    app = create_app(
        request_timeout_s=request_timeout_s, idle_ttl_s=idle_ttl_s, imports=imports, token=token, identity=ident
    )
    if replica is not None:
        assert directory is not None  # refused above without --dir
        marker: Path | None = replicas.replica_file(directory, replica)
        announcement = {
            "url": url,
            "replica": replica,
            "host": socket.gethostname(),
            "port": bound,
            "pid": os.getpid(),
            "job_id": replicas.scheduler_job_id(),
            "started_at": started,
            "token_fingerprint": replicas.fingerprint(token or ""),
        }
    else:
        marker = Path(directory) / SERVER_FILE if directory else None
        announcement = {"url": url, "pid": os.getpid(), "host": socket.gethostname(), "started_at": started}

    def withdraw() -> None:
        if marker is None:
            return
        try:
            if json.loads(marker.read_text()).get("pid") == os.getpid():
                marker.unlink()
        except (FileNotFoundError, ValueError):
            pass

    async def replica_watch(leave: asyncio.Event) -> None:
        # A replica leaves when its rollout is done (the executor's `done`, or on HTCondor every
        # shard's own final file) or nobody called it for idle_exit_s; the executor cancels it as
        # well, this is for a rollout that died without cancelling and for a scheduler nobody waits on.
        beat = time.monotonic()
        while not leave.is_set():
            await asyncio.sleep(0.5)
            now = time.monotonic()
            if replicas.rollout_finished(directory, shards) or (  # type: ignore[arg-type]
                idle_exit_s and now - app[STATE].last_request > idle_exit_s
            ):
                leave.set()
            elif now - beat >= 10 and marker is not None:
                beat = now
                if not _same_run(directory, token):  # a newer rollout run took the folder: leave it to its replicas
                    leave.set()
                else:
                    atomic_write_json(marker, {**announcement, "heartbeat_at": time.time()})

    async def main() -> None:
        if stop.stopped:
            return
        # A tool call in flight may run for request_timeout_s; a stop waits at most 5 s for it. aiohttp
        # waits shutdown_timeout for the handler, then (the handler is not cancelled) as long again
        # before it cancels it: 2.5 s twice (5.0 made a stop with a hung call take 10 s).
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=2.5, keepalive_timeout=75)
        await runner.setup()
        leave = asyncio.Event()
        waits = [asyncio.create_task(stop.wait()), asyncio.create_task(leave.wait())]
        watch = asyncio.create_task(replica_watch(leave)) if replica is not None else None
        try:
            await web.SockSite(runner, sock, shutdown_timeout=2.5).start()
            if marker is not None and not stop.stopped:
                marker.parent.mkdir(parents=True, exist_ok=True)
                atomic_write_json(marker, {**announcement, "heartbeat_at": time.time()})
            print(
                f"tool server {'replica ' + str(replica) + ' ' if replica is not None else ''}listening on {url}",
                flush=True,
            )
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in [*waits, *([watch] if watch is not None else [])]:
                task.cancel()
            withdraw()
            await runner.cleanup()

    # Blocking tools run in this pool. Python cannot interrupt a thread, and asyncio.run and the
    # interpreter's exit both wait for every pool thread, so one hung call (a runaway SQLite query)
    # kept a stopped server alive for ever: the pool is not waited for, and a call still running
    # after the graceful shutdown is abandoned (os._exit).
    pool = ThreadPoolExecutor(thread_name_prefix="toolserver-call")
    loop = asyncio.new_event_loop()
    loop.set_default_executor(pool)
    try:
        loop.run_until_complete(main())
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        withdraw()
        sock.close()
        pool.shutdown(wait=False, cancel_futures=True)
        loop.close()
    workers = [t for t in threading.enumerate() if t.name.startswith("toolserver-call")]
    for worker in workers:
        worker.join(1.0)  # idle workers leave at once
    if any(w.is_alive() for w in workers):
        print("tool server: abandoning tool calls still running", file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(0)


def _same_run(directory: str | Path | None, token: str | None) -> bool:
    if directory is None:
        return False
    try:
        return replicas.read_token(directory) == token
    except UserError:
        return False


def find_tool_server(directory: str | Path, wait_s: float = 60.0) -> str:
    """The URL from `<directory>/toolserver.json`, waiting up to `wait_s` for a server job to write it."""
    path = Path(directory) / SERVER_FILE
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return str(json.loads(path.read_text())["url"])
        except (FileNotFoundError, ValueError, KeyError):
            if time.monotonic() > deadline:
                raise UserError(
                    f"{path}: no tool server found; start one with "
                    f"`ptbench bootcamp serve-tools --dir {directory}` or pass --tool-server URL"
                ) from None
            time.sleep(0.5)


class RemoteTool(Tool):
    """Proxies a registered tool to the tool server. An unreachable or failing server raises
    `ToolError`, which ends the episode with a recorded error instead of hanging it."""

    def __init__(self, local: Tool, url: str, *, params: dict[str, Any], timeout_s: float) -> None:
        super().__init__(**params)
        self.name = local.name  # type: ignore[misc]  # a proxy is named per instance (a ClassVar on tools)
        self._schema = local.schema()
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        self._session: Any = None

    def schema(self) -> dict[str, Any]:
        return self._schema

    async def _post(self, path: str, body: dict[str, Any], *, method: str = "POST") -> Any:
        import aiohttp

        if self._session is None or self._session.closed:
            # Slack over the server's own limit so its 504 (a clean answer) arrives before ours fires.
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self.timeout_s + 5, sock_connect=5)
            )
        try:
            async with self._session.request(method, self.url + path, json=body) as resp:
                payload = await resp.json(content_type=None)
                return resp.status, payload
        except TimeoutError:
            raise ToolError(
                f"tool server {self.url} did not answer within {self.timeout_s + 5:g} s", kind="tool_server"
            ) from None
        except (aiohttp.ClientError, ValueError) as exc:
            raise ToolError(
                f"tool server {self.url} unreachable: {type(exc).__name__}: {exc}", kind="tool_server"
            ) from None

    async def create(self, identity: Identity) -> Any:
        status, payload = await self._post(
            "/v1/instances", {"tool": self.name, "params": self.params, "identity": identity}
        )
        if status != 200:
            raise ToolError(f"tool server could not create '{self.name}': HTTP {status} {payload}", kind="tool_server")
        return payload["instance_id"]

    async def execute(self, state: Any, arguments: dict[str, Any]) -> ToolResult:
        status, payload = await self._post(f"/v1/instances/{state}/execute", {"arguments": arguments})
        if status == 504:
            return ToolResult(text=f"error: {payload.get('detail', 'tool call timed out')}", error="timeout")
        if status != 200:
            raise ToolError(f"tool server failed on '{self.name}': HTTP {status} {payload}", kind="tool_server")
        return ToolResult.from_wire(payload)

    async def release(self, state: Any) -> None:
        try:
            await self._post(f"/v1/instances/{state}", {}, method="DELETE")
        except ToolError:
            pass  # the server's idle TTL reclaims it

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
