# The CANDIDATE side of a checked run (ptbench.sandbox.checked). Runs untrusted code, inside the
# sandbox, after the launcher set its limits and dropped its privileges. Executed as
# `python -I -S -c <wire.py source + this file> RFD WFD`: it reads the program from the checker,
# executes it, then answers calls of its entry point with plain data. Nothing it does here is
# trusted: the checker decodes every reply strictly and the harness takes no verdict from it.

# wire.py's source runs before this file; mypy reads its names from the module (nothing imported at run time)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ptbench.sandbox.wire import decode, encode, recv, send


def _describe(exc):
    try:
        return str(exc)[:500]
    except BaseException:
        return "<unprintable>"


def _serve(rfd, wfd):
    try:
        job = recv(rfd)
    except BaseException:
        return
    namespace: dict[str, Any] = {}
    try:
        exec(compile(job["program"], "<completion>", "exec"), namespace)
        function = namespace[job["entry_point"]]
    except BaseException as exc:
        send(wfd, ["load_error", type(exc).__name__, _describe(exc)])
        return
    send(wfd, ["ready"])
    while True:
        try:
            message = recv(rfd)
        except BaseException:
            return
        args, kwargs = decode(message[1]), decode(message[2])
        try:
            result = function(*args, **kwargs)
        except BaseException as exc:
            reply = ["raised", type(exc).__name__, isinstance(exc, Exception), _describe(exc)]
        else:
            try:
                reply = ["return", encode(result)]
            except BaseException as exc:
                reply = ["unencodable", type(result).__name__, _describe(exc)]
        send(wfd, reply)


if __name__ == "__main__":
    import sys as _sys

    _serve(int(_sys.argv[1]), int(_sys.argv[2]))
