"""The wall-clock budget, enforced.

The agent runs in its own session. The runner is a child subreaper (Linux), so a process that
calls setsid() and double-forks is re-parented to the runner instead of init and stays visible as
a descendant: at the deadline every descendant gets SIGTERM, and SIGKILL after the grace period,
until none is left. Time used is reported every second so the runner can persist it; a resumed
solve gets only what is left.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Callable

import psutil

from ptbench.core.jobenv import TRIAL_ENV_MARKER

_PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Adopt orphaned descendants (Linux >= 3.4). Returns False where unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


@dataclass
class SolveOutcome:
    exit_code: int | None  # None when the agent was stopped by the watchdog or an interrupt
    timed_out: bool
    interrupted: str | None  # signal name that interrupted the runner, if any
    seconds: float
    warned: bool


class Watchdog:
    """Runs one command under a deadline and makes sure no process of it outlives the deadline."""

    def __init__(
        self,
        *,
        seconds_left: float,
        grace_seconds: float,
        warn_before: float,
        on_tick: Callable[[float], None] = lambda elapsed: None,
        on_event: Callable[..., None] = lambda kind, **kw: None,
        tick_seconds: float = 1.0,
    ) -> None:
        self.seconds_left = seconds_left
        self.grace = grace_seconds
        self.warn_before = warn_before
        self.on_tick = on_tick
        self.on_event = on_event
        self.tick = tick_seconds
        self.interrupted: str | None = None

    def interrupt(self, signame: str) -> None:
        """Called from the runner's signal handler: stop the agent at the next tick."""
        self.interrupted = signame

    def run(self, argv: list[str], *, cwd: str, env: dict[str, str], stdout, stderr, stdin=subprocess.DEVNULL) -> SolveOutcome:
        start = time.monotonic()
        deadline = start + self.seconds_left
        warn_at = deadline - self.warn_before
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=stdout, stderr=stderr, stdin=stdin, start_new_session=True)
        try:
            self._safe(self.on_event, "agent_started", pid=proc.pid, seconds_left=round(self.seconds_left, 1))
            exit_code, warned = self._watch(proc, start, deadline, warn_at)
            timed_out = exit_code is None and not self.interrupted
            if exit_code is not None:
                self._safe(self.on_event, "agent_exited", exit_code=exit_code)
            elif timed_out:
                self._safe(self.on_event, "deadline", grace_seconds=self.grace)
            else:
                self._safe(self.on_event, "interrupted", signal=self.interrupted)
        finally:
            # Whatever happened above (even a harness error), no process of the agent outlives this;
            # an agent that exited may also have left background processes behind.
            killed = terminate_descendants(self.grace)
        if killed:
            self._safe(self.on_event, "terminated", processes=killed)
        elapsed = min(time.monotonic() - start, self.seconds_left)
        self.on_tick(elapsed)  # the final time must be persisted: let a failure here surface
        return SolveOutcome(exit_code, timed_out, self.interrupted, elapsed, warned)

    def _watch(self, proc: subprocess.Popen, start: float, deadline: float, warn_at: float) -> tuple[int | None, bool]:
        warned = False
        next_tick = start
        while True:
            status = _reap_children(proc.pid)
            if status is not None:
                proc.returncode = status  # reaped here: keep Popen from waiting again
                return status, warned
            now = time.monotonic()
            if self.interrupted or now >= deadline:
                return None, warned
            if not warned and now >= warn_at:
                warned = True
                self._safe(self.on_event, "warned", seconds_left=round(deadline - now, 1))
            if now >= next_tick:
                # A full disk must not stop the watch: the time is kept in memory and saved next tick.
                self._safe(self.on_tick, now - start)
                next_tick = now + self.tick
            time.sleep(min(0.1, max(0.0, deadline - now)))

    @staticmethod
    def _safe(fn: Callable[..., None], *args, **kwargs) -> None:
        try:
            fn(*args, **kwargs)
        except OSError as exc:
            print(f"ptbench watchdog: could not persist progress ({exc}); retrying", file=sys.stderr)


def _reap_children(agent_pid: int) -> int | None:
    """Reap every exited child (orphans adopted as subreaper too); return the agent's exit code if it exited."""
    agent_status = None
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return agent_status
        if pid == 0:
            return agent_status
        if pid == agent_pid:
            agent_status = os.waitstatus_to_exitcode(status)


def _descendants() -> list[psutil.Process]:
    try:
        return psutil.Process().children(recursive=True)
    except psutil.Error:
        return []


def _signal_all(procs: list[psutil.Process], sig: int) -> None:
    for p in procs:
        try:
            p.send_signal(sig)
        except psutil.Error:
            pass


def _alive(procs: list[psutil.Process]) -> list[psutil.Process]:
    out = []
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except psutil.Error:
            pass
    return out


def terminate_descendants(grace_seconds: float) -> int:
    """SIGTERM every descendant, SIGKILL what is left after the grace period; returns how many there were."""
    procs = _alive(_descendants())
    if not procs:
        _reap_children(-1)
        return 0
    seen = {p.pid for p in procs}
    _signal_all(procs, signal.SIGTERM)
    end = time.monotonic() + grace_seconds
    while time.monotonic() < end:
        _reap_children(-1)
        # Processes forked after the first sweep get the same treatment.
        fresh = [p for p in _alive(_descendants()) if p.pid not in seen]
        seen.update(p.pid for p in fresh)
        _signal_all(fresh, signal.SIGTERM)
        if not _alive(_descendants()):
            return len(seen)
        time.sleep(0.1)
    for _ in range(50):
        left = _alive(_descendants())
        if not left:
            break
        seen.update(p.pid for p in left)
        _signal_all(left, signal.SIGKILL)
        time.sleep(0.05)
        _reap_children(-1)
    _reap_children(-1)
    return len(seen)


def kill_leftovers(trial_dir: str) -> int:
    """Kill processes of an earlier attempt of this trial (the runner was killed -9 and its agent lived on).

    They are found by the marker variable every agent process inherits.
    """
    me = os.getpid()
    victims = []
    for p in psutil.process_iter(["pid"]):
        if p.pid == me:
            continue
        try:
            if p.environ().get(TRIAL_ENV_MARKER) == trial_dir:
                victims.append(p)
        except psutil.Error:
            continue
    _signal_all(victims, signal.SIGKILL)
    psutil.wait_procs(victims, timeout=5)
    return len(victims)
