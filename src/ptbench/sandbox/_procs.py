"""Small process helpers shared by the code sandboxes: capped draining, feeding, killing a tree."""

from __future__ import annotations

import os
import signal
import subprocess

from ptbench.core.procgroup import signal_group


def drain(stream, buf: bytearray, cap: int) -> None:
    """Keep reading past the cap so a chatty program cannot block on a full pipe; keep only the head."""
    while chunk := stream.read(65536):
        if len(buf) < cap:
            buf.extend(chunk[: cap - len(buf)])
    stream.close()


def drain_fd(fd: int, buf: bytearray, cap: int) -> None:
    while chunk := os.read(fd, 65536):
        if len(buf) < cap:
            buf.extend(chunk[: cap - len(buf)])
    os.close(fd)


def feed(stream, data: bytes) -> None:
    try:
        stream.write(data)
        stream.close()
    except (BrokenPipeError, OSError):
        pass


def signal_of(rc: int | None) -> int | None:
    """The signal that ended a process: a direct child reports -SIG, bwrap's reaper 128+SIG."""
    if rc is None:
        return None
    if rc < 0:
        return -rc
    return rc - 128 if rc > 128 else None


def descendants(root) -> int:
    import psutil

    try:
        return len(root.children(recursive=True))
    except psutil.Error:
        return 0


def kill_tree(proc: subprocess.Popen, root) -> None:
    """SIGKILL the process, its session (every run starts its own) and every descendant seen."""
    import psutil

    victims = []
    if root is not None:
        try:
            victims = root.children(recursive=True)
        except psutil.Error:
            pass
    signal_group(proc.pid, signal.SIGKILL)
    for v in victims:
        try:
            v.kill()
        except psutil.Error:
            pass
    try:
        proc.kill()
    except ProcessLookupError:
        pass


def ps_handle(pid: int):
    import psutil

    try:
        return psutil.Process(pid)
    except psutil.NoSuchProcess:
        return None
