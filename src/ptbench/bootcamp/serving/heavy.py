"""Heavy tools: calls that run in killable worker processes instead of threads.

A thread cannot be stopped, so a runaway simulation run with `asyncio.to_thread` keeps burning a
core after its timeout and races with `release`. A `HeavyTool` runs `execute_sync` (and a heavy
reward its `score`) in a pebble `ProcessPool` sized to the cores the shard may use:
- a call past its time limit (or cancelled by the episode's own `timeout_s`) kills its worker and
  pebble starts a fresh one;
- each worker has an address-space limit (RLIMIT_AS), so a runaway allocation is a `MemoryError`
  in that worker, not an OOM kill of the shard;
- a worker that dies (os._exit, a segfault in a C extension) is a recorded tool error the model sees;
- workers die with the shard (PR_SET_PDEATHSIG) and are stopped when the shard closes its tools.
The per-episode state is a JSON-like dict that travels to the worker with each call and comes back
with its result, so a worker that is killed loses nothing but the call in flight.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import resource
import signal
import threading
from concurrent.futures import CancelledError
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, ClassVar

from ptbench.bootcamp.api import Identity, RewardCalculator, RewardResult, Tool, ToolResult, canonical_json
from ptbench.core.prctl import set_parent_death_signal
from ptbench.core.private_multiprocessing import stop_multiprocessing_helpers


def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover (not Linux)
        return os.cpu_count() or 1


def _watch_owner(owner: int) -> None:
    """If the shard that owns the pool dies (even by SIGKILL), end this worker and the forkserver that
    forked it (our parent, not the shard's): nothing it started keeps running. The resource tracker
    then sees its pipe close and exits too."""
    import time

    while True:
        time.sleep(1.0)
        try:
            os.kill(owner, 0)
        except ProcessLookupError:
            parent = os.getppid()
            if parent not in (owner, 1):
                try:
                    os.kill(parent, signal.SIGKILL)
                except OSError:
                    pass
            os._exit(1)


def _worker_init(memory_mb: int | None, nice: int, owner: int | None = None) -> None:
    if owner is not None:
        threading.Thread(target=_watch_owner, args=(owner,), daemon=True).start()
    # Below the shard's priority: when simulations saturate the cores, the event loop (and a model
    # server on the same node) still get a core the moment they need one.
    if nice:
        os.nice(nice)
    # One BLAS/OpenMP thread per worker: the pool already uses every core.
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    set_parent_death_signal(signal.SIGKILL)  # die with the process that forked us, even if it is SIGKILLed
    if memory_mb:
        limit = int(memory_mb) * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


_INSTANCES: dict[tuple[type, str], Any] = {}


def _instance(cls: type, params: dict[str, Any]) -> Any:
    """One object per (class, params) per worker: heavy setup (model parameter sets) is paid once."""
    key = (cls, canonical_json(params))
    if key not in _INSTANCES:
        _INSTANCES[key] = cls(**params)
    return _INSTANCES[key]


def _execute_in_worker(
    cls: type, params: dict[str, Any], state: Any, arguments: dict[str, Any]
) -> tuple[ToolResult, Any]:
    result = _instance(cls, params).execute_sync(state, arguments)
    return result, state


def _score_in_worker(cls: type, params: dict[str, Any], text: str | None, identity: Identity) -> RewardResult:
    return RewardCalculator.score(_instance(cls, params), text, identity)


class WorkerPool:
    """A pebble ProcessPool shared by the heavy tools and rewards of one process (reference-counted)."""

    _lock = threading.Lock()
    _shared: dict[tuple[int, int | None, int], WorkerPool] = {}

    def __init__(self, workers: int, memory_mb: int | None, nice: int = 10, preload: tuple[str, ...] = ()) -> None:
        from pebble import ProcessPool

        self.key = (workers, memory_mb, nice)
        self.users = 0
        # forkserver, not fork: the shard has threads (event loop helpers, aiohttp) whose locks a
        # forked child would inherit held.
        # forked child would inherit held. Preload this module only: the default also re-imports the
        # shard's __main__ in the server.
        ctx = multiprocessing.get_context("forkserver")
        # `preload` (e.g. pybamm) is imported once in the server, so a fresh worker is ready at once.
        ctx.set_forkserver_preload(["ptbench.bootcamp.serving.heavy", *preload])
        self.pool = ProcessPool(
            max_workers=workers, initializer=_worker_init, initargs=(memory_mb, nice, os.getpid()), context=ctx
        )
        # pebble forks its workers on the first schedule: do that here (callers are off the event loop).
        self.pool.schedule(os.getpid).result(timeout=120)

    @classmethod
    def acquire(cls, workers: int, memory_mb: int | None, nice: int = 10, preload: tuple[str, ...] = ()) -> WorkerPool:
        with cls._lock:
            pool = cls._shared.get((workers, memory_mb, nice))
            if pool is None:
                pool = cls._shared[(workers, memory_mb, nice)] = cls(workers, memory_mb, nice, preload)
            pool.users += 1
            return pool

    def release(self) -> None:
        with self._lock:
            self.users -= 1
            if self.users > 0:
                return
            self._shared.pop(self.key, None)
        self.pool.stop()
        self.pool.join()
        _stop_helpers()

    def pids(self) -> list[int]:
        """Live worker pids (for tests and the benchmark)."""
        import psutil

        return [c.pid for c in psutil.Process().children(recursive=True) if c.is_running()]

    async def run(self, fn: Any, args: tuple[Any, ...], timeout_s: float | None) -> Any:
        future = self.pool.schedule(fn, args=list(args), timeout=timeout_s)
        # Cancelling the asyncio future (the episode's wait_for) cancels the pebble future, and pebble
        # stops the worker running a cancelled call.
        return await asyncio.wrap_future(future)


def _stop_helpers() -> None:
    """Stop the forkserver and resource tracker too, so nothing this pool started outlives it
    (both restart on demand if anything needs them again)."""
    try:
        stop_multiprocessing_helpers()
    except Exception:  # pragma: no cover (already gone)
        pass


def describe_failure(exc: BaseException, timeout_s: float | None) -> ToolResult:
    """A worker failure as the tool result the model sees (and the trace keeps)."""
    from pebble import ProcessExpired

    if isinstance(exc, FutureTimeout):
        return ToolResult(text=f"error: tool call killed after {timeout_s:g} s", error="timeout")
    if isinstance(exc, ProcessExpired):
        return ToolResult(
            text=f"error: tool process died (exit code {exc.exitcode}); the call was not completed",
            error="tool_crashed",
        )
    if isinstance(exc, MemoryError):
        return ToolResult(text="error: tool ran out of memory (worker memory limit)", error="tool_memory")
    return ToolResult(text=f"error: tool failed: {type(exc).__name__}: {exc}", error="tool_exception")


class HeavyTool(Tool):
    """A tool whose `execute_sync(state, arguments)` runs in a worker process.

    Params every heavy tool takes: `call_timeout_s` (worker-side limit; default 60), `memory_mb`
    (RLIMIT_AS per worker; default 4096), `workers` (default: the cores this process may use),
    `nice` (worker priority below the shard's; default 10).
    `create_sync`/`release_sync` run in the shard (keep them cheap); the state they make must be
    picklable, and what `execute_sync` changes in it is copied back after each call.
    """

    heavy: ClassVar[bool] = True
    blocking: ClassVar[bool] = True
    preload: ClassVar[tuple[str, ...]] = ()
    """Modules the forkserver imports once (when this tool starts the pool), so workers start warm."""
    _POOL_PARAMS = ("call_timeout_s", "memory_mb", "workers")

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.call_timeout_s = float(params.get("call_timeout_s", 60.0))
        self.memory_mb = params.get("memory_mb", 4096)
        self.workers = int(params.get("workers") or default_workers())
        self.nice = int(params.get("nice", 10))
        self._pool: WorkerPool | None = None
        self._pool_lock = threading.Lock()

    def pool(self) -> WorkerPool:
        with self._pool_lock:
            if self._pool is None:
                self._pool = WorkerPool.acquire(self.workers, self.memory_mb, self.nice, self.preload)
            return self._pool

    async def create(self, identity: Identity) -> Any:
        if self._pool is None:  # starting the pool forks processes: not on the event loop
            await asyncio.to_thread(self.pool)
        return await super().create(identity)

    async def execute(self, state: Any, arguments: dict[str, Any]) -> ToolResult:
        try:
            result, new_state = await self.pool().run(
                _execute_in_worker, (type(self), self.params, state, arguments), self.call_timeout_s
            )
        except (CancelledError, asyncio.CancelledError):
            raise
        except BaseException as exc:  # a worker failure is the model's to see, recorded in the trace
            return describe_failure(exc, self.call_timeout_s)
        if isinstance(state, dict) and isinstance(new_state, dict):
            state.clear()
            state.update(new_state)
        return result

    async def aclose(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await asyncio.to_thread(pool.release)


class HeavyReward(RewardCalculator):
    """A reward whose verification runs a simulator: `score` runs in the worker pool when awaited
    through `score_async` (the episode loop does), and in process when called directly (verl)."""

    heavy: ClassVar[bool] = True


async def score_async(
    reward: RewardCalculator, text: str | None, identity: Identity, pool_from: list[Tool]
) -> RewardResult:
    """Score off the event loop: a heavy reward in the heavy tools' pool, otherwise in process."""
    if not getattr(reward, "heavy", False):
        return reward.score(text, identity)
    heavy = [t for t in pool_from if isinstance(t, HeavyTool)]
    if not heavy:
        return await asyncio.to_thread(reward.score, text, identity)
    tool = heavy[0]
    return await tool.pool().run(_score_in_worker, (type(reward), reward.params, text, identity), tool.call_timeout_s)
