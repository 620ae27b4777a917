"""Stop a long-running server on SIGINT or SIGTERM, whenever the signal arrives.

The handler only records the signal and wakes the event loop; the server checks the record at safe
points (before it starts listening, while it waits). So a signal that arrives before the server is
up is kept instead of lost, and no KeyboardInterrupt is raised inside a blocking call or swallowed
by a library's bare `except`.

The handlers are installed even over an inherited SIG_IGN. A shell starts background jobs
(`cmd &` in a script, many CI runners) with SIGINT ignored; Python then never installs its
KeyboardInterrupt handler and neither does asyncio, so such a server ignored SIGINT for ever. That
is what left `ptbench provider serve` alive after SIGINT in CI.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable
from types import FrameType
from typing import Any, Self

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
RECHECK_S = 0.25


class StopSignals:
    """`with StopSignals() as stop:` (main thread only) records the first stop signal in
    `stop.received`; `await stop.wait()` returns once one has come (at once if it came earlier).
    The previous handlers are restored on exit."""

    def __init__(self) -> None:
        self.received: int | None = None
        self._wakers: list[Callable[[], None]] = []
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> Self:
        for sig in STOP_SIGNALS:
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    @property
    def stopped(self) -> bool:
        return self.received is not None

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        # Runs between two bytecodes of the main thread, possibly inside the event loop itself:
        # take no lock (a threading.Event could deadlock here), only record and wake.
        if self.received is None:
            self.received = signum
        for wake in list(self._wakers):
            wake()

    async def wait(self) -> int:
        """Block the calling coroutine until a stop signal has been received; return its number."""
        loop = asyncio.get_running_loop()
        came = asyncio.Event()

        def wake() -> None:
            # call_soon_threadsafe writes to the loop's self-pipe, so a loop asleep in epoll wakes up.
            loop.call_soon_threadsafe(came.set)

        self._wakers.append(wake)
        try:
            while self.received is None:
                # Re-check on a short period too: a process-directed signal may be taken by another
                # thread (an executor's), which only sets CPython's pending flag; the Python handler
                # then runs when the main thread next runs bytecode, which an idle epoll never does.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(came.wait(), RECHECK_S)
        finally:
            self._wakers.remove(wake)
        assert self.received is not None
        return self.received
