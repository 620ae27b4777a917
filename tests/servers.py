"""Helpers for tests that start a long-running ptbench server as a real process and stop it with a
signal: spawn it (optionally with SIGINT ignored, as a shell's background job or a CI runner gets
it), wait for its address file, signal it, and always kill what is left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ALIVE_LIMIT_S = 60.0
"""A server still running this long after a stop signal is stuck, not slow (a hang guard, not a timing)."""


def spawn(
    args: list[str], log: Path, *, ignore_sigint: bool = False, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """`python -m ptbench ARGS` in its own process group; output to LOG (an unread pipe could fill
    and block the server). With `ignore_sigint` it starts with SIGINT ignored, inherited through exec."""
    cmd = [sys.executable, "-m", "ptbench", *args]
    if ignore_sigint:
        cmd = ["bash", "-c", 'trap "" INT; exec "$@"', "bash", *cmd]
    with open(log, "wb") as out:
        return subprocess.Popen(
            cmd,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            # SIGINT as a terminal gives it, whatever this pytest worker holds: CI twice saw a worker
            # whose SIGINT had become ignored (left so by an earlier test), and the server, inheriting
            # that, dropped a SIGINT sent before its handler was in place. The ignored case is the
            # `ignore_sigint` variant, set up by bash above.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
            env={**os.environ, "NO_COLOR": "1", **(env or {})},
        )


def reap(proc: subprocess.Popen[bytes]) -> None:
    """Kill the server's whole process group if anything of it is left; never leave a process behind."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


@contextmanager
def running(
    args: list[str], log: Path, *, ignore_sigint: bool = False, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    proc = spawn(args, log, ignore_sigint=ignore_sigint, env=env)
    try:
        yield proc
    finally:
        reap(proc)


def wait_for_file(path: Path, proc: subprocess.Popen[bytes], log: Path, limit_s: float = 120.0) -> None:
    deadline = time.monotonic() + limit_s
    while not path.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"server did not write {path.name} (exit {proc.poll()}): {log.read_text()[-2000:]}")
        time.sleep(0.05)


def wait_gone(proc: subprocess.Popen[bytes], log: Path, what: str) -> int:
    """The exit status once the process has ended; fails if it is still alive after ALIVE_LIMIT_S."""
    try:
        return proc.wait(ALIVE_LIMIT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still alive {ALIVE_LIMIT_S:g} s after {what}: {log.read_text()[-2000:]}")


@contextmanager
def cpu_load() -> Iterator[None]:
    """Every core (at most 2) busy, as on the loaded CI machine where startup is slow: a busy loop for
    each core the machine's load (its one-minute average) leaves idle. Under the suite's pytest-xdist
    workers the cores are busy already and no loop starts: there the loops only took CPU from the
    other workers (70 of the determinism test's 114 CPU seconds on CI's two cores)."""
    cores = min(os.cpu_count() or 1, 2)
    busy = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
        for _ in range(max(0, cores - int(os.getloadavg()[0])))
    ]
    try:
        yield
    finally:
        for proc in busy:
            reap(proc)


@contextmanager
def http_handler(handler) -> Iterator[str]:
    """Serve one aiohttp handler for every path on a free loopback port (a fake upstream); yields its base URL."""
    from ptbench.core.aioserve import serve_in_thread, start_catch_all

    class _Server:
        base_url = ""

        async def start(self) -> None:
            self.runner, self.base_url = await start_catch_all(handler)

        async def stop(self) -> None:
            await self.runner.cleanup()

    server = _Server()
    with serve_in_thread(server, name="fake-upstream"):
        yield server.base_url
