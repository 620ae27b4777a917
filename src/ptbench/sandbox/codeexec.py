"""Run untrusted Python programs (HumanEval completions, BFCL calls) one process each, fenced in.

Every program runs in its own process with:

- wall-clock limit (the harness kills the whole tree), CPU limit (RLIMIT_CPU), address-space limit
  (RLIMIT_AS), file-size limit (RLIMIT_FSIZE), no core dumps;
- a process-count limit: RLIMIT_NPROC *and* a watchdog that counts the program's descendants and
  kills the tree past the limit;
- with bubblewrap (isolation "bwrap"): its own PID, network, IPC and UTS namespaces (no network at
  all: only a loopback that is down), the whole filesystem read-only, the home directory hidden, a
  private size-limited tmpfs as /tmp and $HOME, an empty environment; when the sandbox's first
  process dies the kernel kills everything left in its PID namespace, so nothing outlives a run.

What is enforced as root: the kernel ignores RLIMIT_NPROC for uid 0 (and for any process whose
user is root outside a user namespace). Under bwrap the launcher therefore switches to an unused,
unprivileged uid (one per run, so concurrent runs do not share a count) before it executes the
program; the program has no capabilities and cannot raise its limits back. As a normal user bwrap
creates a user namespace and RLIMIT_NPROC is set inside it, so the count is per sandbox.
Without bwrap (isolation "rlimits", a fallback recorded in the metrics) the network is *not* cut
off and the filesystem is the caller's; the limits and the watchdog still apply, and as root only
the watchdog bounds the process count.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

Isolation = Literal["bwrap", "rlimits"]

# Runs first inside the sandbox: set limits, drop root, then replace itself with the program's
# interpreter (so the program never runs with the privileges the launcher had).
_LAUNCHER = r"""
import json, os, resource, sys
lim = json.loads(sys.argv[1])
def cap(res, value):
    resource.setrlimit(res, (value, value))
cap(resource.RLIMIT_CORE, 0)
cap(resource.RLIMIT_FSIZE, lim["file_bytes"])
resource.setrlimit(resource.RLIMIT_CPU, (lim["cpu_seconds"], lim["cpu_seconds"] + 1))
cap(resource.RLIMIT_AS, lim["memory_bytes"])
if lim["max_processes"] is not None:
    cap(resource.RLIMIT_NPROC, lim["max_processes"])
if lim["uid"] is not None and os.getuid() == 0:
    os.setgroups([])
    os.setgid(lim["uid"])
    os.setuid(lim["uid"])
os.execv(sys.executable, [sys.executable, "-I", "-S", "-"])
"""


@dataclass(frozen=True)
class Limits:
    wall_seconds: float = 15.0
    cpu_seconds: int = 10
    memory_bytes: int = 1 << 30
    max_processes: int = 32
    file_bytes: int = 16 << 20
    tmp_bytes: int = 64 << 20
    output_bytes: int = 256 << 10


@dataclass(frozen=True)
class ExecResult:
    status: Literal["ok", "error", "timeout", "killed"]  # ok = exit code 0
    returncode: int | None
    stdout: str
    stderr: str
    seconds: float
    reason: str = ""  # why it was killed: "wall time limit", "process limit"

    @property
    def passed(self) -> bool:
        return self.status == "ok"


@lru_cache(maxsize=1)
def bwrap_available() -> bool:
    """bwrap exists and can create the namespaces we need here (some containers forbid them)."""
    exe = shutil.which("bwrap")
    if not exe:
        return False
    probe = subprocess.run([*_bwrap_argv(Limits(), exe), "-c", "pass"], input=b"", capture_output=True, timeout=30)
    return probe.returncode == 0


def default_isolation() -> Isolation:
    """`PTBENCH_CODEEXEC_ISOLATION` (bwrap | rlimits) or bwrap where it works."""
    chosen = os.environ.get("PTBENCH_CODEEXEC_ISOLATION", "auto")
    if chosen in ("bwrap", "rlimits"):
        return chosen  # type: ignore[return-value]
    return "bwrap" if bwrap_available() else "rlimits"


_uids = itertools.count()


def _sandbox_uid() -> int | None:
    """An unused uid for a run started as root (so the kernel enforces RLIMIT_NPROC)."""
    if os.getuid() != 0:
        return None
    return 2_000_000 + (os.getpid() % 4000) * 1000 + next(_uids) % 1000


def _masked_dirs() -> list[str]:
    home = os.path.expanduser("~")
    return sorted({d for d in (home, "/root") if os.path.isdir(d) and d != "/"})


def _bwrap_argv(limits: Limits, exe: str = "bwrap") -> list[str]:
    argv = [exe, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session", "--ro-bind", "/", "/"]
    if os.getuid() == 0:
        argv += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]  # only the launcher uses them
    else:
        argv += ["--unshare-user"]
    # Hide home directories (keys, tokens); put the interpreter back if it lives under one.
    prefix = os.path.realpath(sys.base_prefix)
    for masked in _masked_dirs():
        argv += ["--perms", "0755", "--tmpfs", masked]
        if prefix.startswith(masked.rstrip("/") + "/"):
            parts = prefix[len(masked):].strip("/").split("/")
            for i in range(1, len(parts)):
                argv += ["--perms", "0755", "--dir", os.path.join(masked, *parts[:i])]
            argv += ["--ro-bind", prefix, prefix]
    argv += ["--dev", "/dev", "--proc", "/proc", "--perms", "1777", "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp",
             "--clearenv", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", "/tmp",
             "--setenv", "TMPDIR", "/tmp", "--setenv", "LANG", "C.UTF-8", "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
             "--chdir", "/tmp", _interpreter()]
    return argv


def _interpreter() -> str:
    return os.path.realpath(sys.executable)


def run_python(code: str, limits: Limits = Limits(), *, isolation: Isolation | None = None) -> ExecResult:
    """Run `code` as a program (read from stdin by a fresh interpreter) under the limits."""
    isolation = isolation or default_isolation()
    lim = {"cpu_seconds": max(1, int(limits.cpu_seconds)), "memory_bytes": limits.memory_bytes,
           "max_processes": limits.max_processes, "file_bytes": limits.file_bytes, "uid": None}
    if isolation == "bwrap":
        lim["uid"] = _sandbox_uid()
        argv = [*_bwrap_argv(limits), "-I", "-S", "-c", _LAUNCHER, json.dumps(lim)]
        cwd, env, tmp = None, None, None
    else:
        import tempfile

        tmp = tempfile.mkdtemp(prefix="ptbench-exec-")
        lim["max_processes"] = None  # a plain RLIMIT_NPROC would count every process of the user
        argv = [_interpreter(), "-I", "-S", "-c", _LAUNCHER, json.dumps(lim)]
        cwd, env = tmp, {"PATH": "/usr/bin:/bin", "HOME": tmp, "TMPDIR": tmp, "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        return _supervise(argv, code, limits, cwd=cwd, env=env)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def _supervise(argv: list[str], code: str, limits: Limits, *, cwd: str | None, env: dict | None) -> ExecResult:
    import psutil

    started = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=cwd, env=env, start_new_session=True)
    out, err = bytearray(), bytearray()
    readers = [threading.Thread(target=_drain, args=(proc.stdout, out, limits.output_bytes), daemon=True),
               threading.Thread(target=_drain, args=(proc.stderr, err, limits.output_bytes), daemon=True),
               threading.Thread(target=_feed, args=(proc.stdin, code.encode()), daemon=True)]
    for t in readers:
        t.start()
    reason = ""
    try:
        root = psutil.Process(proc.pid)
    except psutil.NoSuchProcess:
        root = None
    while proc.poll() is None:
        if time.monotonic() - started > limits.wall_seconds:
            reason = "wall time limit"
        elif root is not None:
            try:
                # bwrap itself and its PID-1 reaper are two processes that are not the program's.
                if len(root.children(recursive=True)) > limits.max_processes + 2:
                    reason = "process limit"
            except psutil.Error:
                pass
        if reason:
            _kill_tree(proc, root)
            break
        time.sleep(0.02 if time.monotonic() - started < 1 else 0.1)
    proc.wait()
    for t in readers[:2]:
        t.join(timeout=5)
    seconds = time.monotonic() - started
    rc = proc.returncode
    if reason:
        status = "timeout" if reason == "wall time limit" else "killed"
    elif rc == 0:
        status = "ok"
    elif (sig := _signal_of(rc)) in (signal.SIGKILL, signal.SIGXCPU):
        status, reason = "killed", f"signal {signal.Signals(sig).name}"
    else:
        status = "error"
    return ExecResult(status=status, returncode=rc, stdout=out.decode(errors="replace"),
                      stderr=err.decode(errors="replace"), seconds=round(seconds, 3), reason=reason)


def _signal_of(rc: int | None) -> int | None:
    # A direct child reports -SIG; bwrap's reaper reports 128+SIG like a shell.
    if rc is None:
        return None
    if rc < 0:
        return -rc
    return rc - 128 if rc > 128 else None


def _drain(stream, buf: bytearray, cap: int) -> None:
    # Keep reading past the cap so a chatty program cannot block on a full pipe; keep only the head.
    while chunk := stream.read(65536):
        if len(buf) < cap:
            buf.extend(chunk[: cap - len(buf)])
    stream.close()


def _feed(stream, data: bytes) -> None:
    try:
        stream.write(data)
        stream.close()
    except (BrokenPipeError, OSError):
        pass


def _kill_tree(proc: subprocess.Popen, root) -> None:
    import psutil

    victims = []
    if root is not None:
        try:
            victims = root.children(recursive=True)
        except psutil.Error:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for v in victims:
        try:
            v.kill()
        except psutil.Error:
            pass
    proc.kill()


def run_many(programs: list[str], limits: Limits = Limits(), *, workers: int | None = None,
             isolation: Isolation | None = None) -> list[ExecResult]:
    """Run programs concurrently (each in its own sandbox); results in input order."""
    isolation = isolation or default_isolation()
    workers = workers or max(1, min(8, os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda code: run_python(code, limits, isolation=isolation), programs))
