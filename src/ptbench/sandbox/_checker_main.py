# The CHECKER side of a checked run (ptbench.sandbox.checked). Trusted: it runs only the
# dataset's code (the prompt's definitions and the test) and calls the candidate through a proxy
# that crosses a pipe with plain data. Executed once per batch as
# `python -I -S -c <wire.py source + this file> SOCKET_FD`: a zygote that forks one fresh checker
# per job; each job (with the run's secret) arrives on its own pipe from the harness. The secret
# goes to the verdict pipe only after check() returned normally and no call of the candidate
# broke the protocol, died, or raised a control-flow exception; the harness counts a pass on
# nothing else.

import builtins as _builtins
import os as _os
import resource as _resource
import signal as _signal
import sys as _sys

# wire.py's source runs before this file; mypy reads its names from the module (nothing imported at run time)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ptbench.sandbox.wire import decode, encode, recv, send

# Exceptions of the candidate re-raised under their own type (a test may expect one); any other
# Exception becomes CandidateError; a BaseException that is not an Exception (SystemExit,
# KeyboardInterrupt, GeneratorExit) or a StopIteration (which would end a `map` or generator in
# the test early) poisons the run.
_FAITHFUL = frozenset(
    {
        "ArithmeticError",
        "AssertionError",
        "AttributeError",
        "BufferError",
        "EOFError",
        "FloatingPointError",
        "ImportError",
        "IndexError",
        "KeyError",
        "LookupError",
        "MemoryError",
        "ModuleNotFoundError",
        "NameError",
        "NotImplementedError",
        "OSError",
        "OverflowError",
        "RecursionError",
        "RuntimeError",
        "TypeError",
        "UnboundLocalError",
        "UnicodeError",
        "ValueError",
        "ZeroDivisionError",
    }
)


class CandidateError(Exception):
    """The candidate raised an exception of a type the checker does not recreate."""


class Proxy:
    """Stands for the candidate's function in the checker: each call is one round trip."""

    def __init__(self, to_candidate, from_candidate):
        self._out, self._in = to_candidate, from_candidate
        self.poisoned = None  # why this run can no longer pass

    def __call__(self, *args, **kwargs):
        if self.poisoned:
            raise CandidateError(self.poisoned)
        try:
            send(self._out, ["call", encode(list(args)), encode(kwargs)])
            reply = recv(self._in)
        except BaseException as exc:
            self._poison("candidate channel failed: " + type(exc).__name__)
        return self._result(reply)

    def _result(self, reply):
        if type(reply) is not list or not reply:
            self._poison("malformed reply")
        kind = reply[0]
        if kind == "return" and len(reply) == 2:
            try:
                return decode(reply[1])
            except Exception:
                self._poison("reply is not plain data")
        if kind == "raised" and len(reply) == 4 and type(reply[1]) is str:
            name, is_exception, text = reply[1], reply[2] is True, str(reply[3])[:500]
            if not is_exception or name in ("StopIteration", "StopAsyncIteration"):
                self._poison("candidate raised " + name[:60])
            if name in _FAITHFUL:
                raise getattr(_builtins, name)(text)
            raise CandidateError(name[:60] + ": " + text)
        if kind == "unencodable":
            self._poison("candidate returned a value that is not plain data")
        self._poison("malformed reply")

    def _poison(self, why):
        self.poisoned = self.poisoned or why
        raise CandidateError(why)


def _check(job, to_candidate, from_candidate):
    proxy = Proxy(to_candidate, from_candidate)
    send(to_candidate, {"program": job["program"], "entry_point": job["entry_point"]})
    namespace: dict[str, Any] = {}
    exec(compile(job["prompt"], "<prompt>", "exec"), namespace)  # the dataset's helpers (poly, encode_cyclic)
    namespace[job["entry_point"]] = proxy  # a test may call the function by name (HumanEval/33)
    exec(compile(job["test"], "<test>", "exec"), namespace)
    check = namespace["check"]
    try:
        ready = recv(from_candidate)
    except BaseException as exc:
        return "candidate did not start: " + type(exc).__name__
    if ready != ["ready"]:
        kind = ready[0] if type(ready) is list and ready else "?"
        return "candidate program failed to load" if kind == "load_error" else "malformed candidate greeting"
    try:
        check(proxy)
    except BaseException as exc:
        return proxy.poisoned or "check failed: " + type(exc).__name__ + ": " + str(exc)[:200]
    return proxy.poisoned  # None: passed


def _run_job(job_fd, to_candidate, from_candidate, verdict_fd):
    job = recv(job_fd)
    _os.close(job_fd)
    secret = job.pop("secret")
    # The wall limit again, from inside: a checker the harness stopped waiting for ends itself.
    _signal.setitimer(_signal.ITIMER_REAL, job["wall_seconds"] + 1)
    limit = job["memory_bytes"]
    _resource.setrlimit(_resource.RLIMIT_AS, (limit, limit))
    try:
        failure = _check(job, to_candidate, from_candidate)
    except BaseException as exc:
        failure = "checker could not run the test: " + type(exc).__name__ + ": " + str(exc)[:200]
    if failure is None:
        send(verdict_fd, {"passed": True, "secret": secret})
    else:
        send(verdict_fd, {"passed": False, "reason": failure[:300]})


def _zygote(sock_fd):
    """Fork one fresh checker per job (a fork of this small single-threaded process costs far less
    than starting an interpreter). The harness sends each job's four pipe ends over the socket."""
    import socket

    sock = socket.socket(fileno=sock_fd)
    _signal.signal(_signal.SIGCHLD, _signal.SIG_IGN)  # children are reaped by the kernel
    while True:
        try:
            _, fds, _, _ = socket.recv_fds(sock, 16, 4)
        except OSError:
            return
        if len(fds) != 4:
            if not fds:
                return  # the harness closed the socket
            for fd in fds:
                _os.close(fd)
            continue
        if _os.fork() == 0:
            try:
                sock.close()
                _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)
                _run_job(*fds)
            finally:
                _os._exit(0)
        for fd in fds:
            _os.close(fd)


if __name__ == "__main__":
    _zygote(int(_sys.argv[1]))
