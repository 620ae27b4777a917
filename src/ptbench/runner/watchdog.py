"""The wall-clock budget, enforced.

The agent runs in its own session, and where the node lets the runner make one, in its own cgroup
(node/cgroup.py): at the deadline every process in it gets SIGTERM, and after the grace period the
kernel kills whatever is left at once (`cgroup.kill`, race-free against forks, blind to nothing:
a process re-parented to init, one started without the trial's marker variable). The runner is
also a child subreaper (Linux), so a process that calls setsid() and double-forks is re-parented
to the runner instead of init and stays visible as a descendant: the sweep of descendants (SIGTERM,
SIGKILL after the grace, until none is left) runs after the cgroup kill as a second net, and alone
where there is no cgroup. Under bwrap the SIGTERM skips bubblewrap's own processes, so the agent
inside, not bwrap, gets the signal and its grace period (`_spare_from_term`). Time used is reported
every second so the runner can persist it; a resumed solve gets only what is left. Time the job
spent stopped (a heartbeat gap longer than PTBENCH_SUSPEND_GAP_SECONDS, default 10: Slurm suspend,
gang scheduling, HTCondor suspend) is not charged: the deadline moves by the gap and a `suspended`
event records it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import psutil

from ptbench.core.jobenv import TRIAL_ENV_MARKER
from ptbench.core.prctl import set_child_subreaper
from ptbench.node.cgroup import ENTER_FAILED_EXIT, TrialCgroup
from ptbench.sandbox.bwrap import BWRAP_PROCESS

KILL_SWEEP_SECONDS = 30.0


def become_subreaper() -> bool:
    """Adopt orphaned descendants (Linux >= 3.4); True only if the kernel says it took effect."""
    return set_child_subreaper(True)


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
        on_resume: Callable[[float], None] = lambda seconds_left: None,
        suspend_gap_seconds: float | None = None,
        cgroup: TrialCgroup | None = None,
    ) -> None:
        self.cgroup = cgroup  # None: the subreaper sweep alone
        self.seconds_left = seconds_left
        self.grace = grace_seconds
        self.warn_before = warn_before
        self.on_tick = on_tick
        self.on_event = on_event
        self.tick = tick_seconds
        self.interrupted: str | None = None
        self.on_resume = on_resume
        # A heartbeat gap this long means the job was stopped (SIGSTOP by the scheduler: Slurm
        # suspend, gang scheduling, HTCondor suspend): that time is not the agent's.
        self.suspend_gap = suspend_gap_seconds if suspend_gap_seconds is not None else _suspend_gap_from_env()
        self.suspended = 0.0  # seconds not charged

    def interrupt(self, signame: str) -> None:
        """Called from the runner's signal handler: stop the agent at the next tick."""
        self.interrupted = signame

    def run(
        self, argv: list[str], *, cwd: str, env: dict[str, str], stdout, stderr, stdin=subprocess.DEVNULL
    ) -> SolveOutcome:
        start = time.monotonic()
        deadline = start + self.seconds_left
        warn_at = deadline - self.warn_before
        if self.cgroup is not None:
            argv = self.cgroup.wrap(argv)
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdout=stdout, stderr=stderr, stdin=stdin, start_new_session=True
        )
        try:
            self._safe(self.on_event, "agent_started", pid=proc.pid, seconds_left=round(self.seconds_left, 1))
            exit_code, warned = self._watch(proc, start, deadline, warn_at)
            timed_out = exit_code is None and not self.interrupted
            if exit_code == ENTER_FAILED_EXIT and self.cgroup is not None:
                self._safe(self.on_event, "cgroup_enter_failed", cgroup=str(self.cgroup.path))
            if exit_code is not None:
                self._safe(self.on_event, "agent_exited", exit_code=exit_code)
            elif timed_out:
                self._safe(self.on_event, "deadline", grace_seconds=self.grace)
            else:
                self._safe(self.on_event, "interrupted", signal=self.interrupted)
        finally:
            # Whatever happened above (even a harness error), no process of the agent outlives this;
            # an agent that exited may also have left background processes behind.
            killed, mechanism = self._stop_everything()
        if killed:
            self._safe(self.on_event, "terminated", processes=killed, mechanism=mechanism)
        elapsed = min(time.monotonic() - start - self.suspended, self.seconds_left)
        self.on_tick(elapsed)  # the final time must be persisted: let a failure here surface
        return SolveOutcome(exit_code, timed_out, self.interrupted, elapsed, warned)

    def _watch(self, proc: subprocess.Popen, start: float, deadline: float, warn_at: float) -> tuple[int | None, bool]:
        warned = False
        next_tick = start
        beat = start
        while True:
            now = time.monotonic()
            if now - beat > self.suspend_gap:  # the loop sleeps 0.1 s: this long a gap is a stopped job
                gap = now - beat - 0.1
                self.suspended += gap
                deadline, warn_at, next_tick = deadline + gap, warn_at + gap, now
                self._safe(
                    self.on_event,
                    "suspended",
                    seconds=round(gap, 1),
                    total_seconds=round(self.suspended, 1),
                    seconds_left=round(deadline - now, 1),
                )
                self._safe(self.on_resume, deadline - now)
            beat = now
            status = _reap_children(proc.pid)
            if status is not None:
                proc.returncode = status  # reaped here: keep Popen from waiting again
                return status, warned
            if self.interrupted or now >= deadline:
                return None, warned
            if not warned and now >= warn_at:
                warned = True
                self._safe(self.on_event, "warned", seconds_left=round(deadline - now, 1))
            if now >= next_tick:
                # A full disk must not stop the watch: the time is kept in memory and saved next tick.
                self._safe(self.on_tick, now - start - self.suspended)
                next_tick = now + self.tick
            time.sleep(min(0.1, max(0.0, deadline - now)))

    def _stop_everything(self) -> tuple[int, str]:
        """SIGTERM, the grace, SIGKILL: by cgroup where there is one, then the sweep of descendants."""
        if self.cgroup is None:
            return terminate_descendants(self.grace), "subreaper"
        killed = self.cgroup.stop(
            self.grace, reap=lambda: _reap_children(-1), term_targets=_term_targets, kill_wait=KILL_SWEEP_SECONDS
        )
        # The second net: a process that left the cgroup (sandbox none: the agent has the runner's
        # uid) is still a descendant. It gets no grace: it was in no cgroup when the SIGTERM went out.
        swept = terminate_descendants(0.0)
        if not self.cgroup.remove():
            self._safe(self.on_event, "cgroup_not_removed", cgroup=str(self.cgroup.path))
        return killed + swept, "cgroup.kill" if not swept else "cgroup.kill+subreaper"

    @staticmethod
    def _safe(fn: Callable[..., None], *args, **kwargs) -> None:
        try:
            fn(*args, **kwargs)
        except OSError as exc:
            print(f"ptbench watchdog: could not persist progress ({exc}); retrying", file=sys.stderr)


def _suspend_gap_from_env(default: float = 10.0) -> float:
    try:
        return max(1.0, float(os.environ.get("PTBENCH_SUSPEND_GAP_SECONDS", default)))
    except ValueError:
        return default


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


def _term_targets(pids: list[int]) -> list[int]:
    return [p.pid for p in _spare_from_term([_process(pid) for pid in pids]) if p is not None]


def _process(pid: int) -> psutil.Process | None:
    try:
        return psutil.Process(pid)
    except psutil.Error:
        return None


def _spare_from_term(procs: Sequence[psutil.Process | None]) -> list[psutil.Process]:
    """The processes the deadline's SIGTERM goes to: all but bubblewrap's own (the outer one and the
    sandbox's init). SIGTERM ends bwrap and the sandbox then dies at once (--die-with-parent), before
    the agent inside could use its grace period; so the agent gets the SIGTERM itself, bwrap ends
    when the agent does, and whatever is left, bwrap included, gets SIGKILL after the grace. (A
    process that names itself bwrap is spared only the SIGTERM.)"""
    out = []
    for p in procs:
        try:
            if p is not None and p.name() != BWRAP_PROCESS:
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
    _signal_all(_spare_from_term(procs), signal.SIGTERM)
    end = time.monotonic() + grace_seconds
    while time.monotonic() < end:
        _reap_children(-1)
        # Processes forked after the first sweep get the same treatment.
        fresh = [p for p in _alive(_descendants()) if p.pid not in seen]
        seen.update(p.pid for p in fresh)
        _signal_all(_spare_from_term(fresh), signal.SIGTERM)
        if not _alive(_descendants()):
            return len(seen)
        time.sleep(0.1)
    # Keep sweeping until the tree is empty: each sweep first stops what it finds (a stopped process
    # cannot fork between sweeps), then kills it. Bounded: a process stuck in uninterruptible I/O
    # must not hang the runner forever.
    end = time.monotonic() + KILL_SWEEP_SECONDS
    while time.monotonic() < end:
        left = _alive(_descendants())
        if not left:
            break
        seen.update(p.pid for p in left)
        _signal_all(left, signal.SIGSTOP)
        _signal_all(left, signal.SIGKILL)
        time.sleep(0.02)
        _reap_children(-1)
    _reap_children(-1)
    return len(seen)


def kill_leftovers(trial_dir: str) -> tuple[int, int]:
    """Kill processes of an earlier attempt of this trial (the runner was killed -9 and its agent lived on).

    They are found in the trial's cgroup, where that attempt had one (all of them, whatever they
    did to their environment), and by the marker variable every agent process inherits (which a
    process started with `env -i` no longer has). Returns (by cgroup, by marker).
    """
    by_cgroup = 0
    if (leftover := TrialCgroup.leftover(trial_dir)) is not None:
        by_cgroup = leftover.kill_and_remove(reap=lambda: _reap_children(-1))
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
    return by_cgroup, len(victims)
