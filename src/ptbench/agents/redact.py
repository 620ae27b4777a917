"""Redaction of known secret values from everything the harness writes.

The harness knows every secret it hands an agent (its keys, tokens from its login files). Nothing
that reaches results/ or logs/ may contain one: the agent's output is piped through a
`RedactingPump` on its way to agent/native.log, and files the CLI leaves in the trial's private HOME
are scrubbed after each run with `scrub_tree`.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import threading
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

MIN_SECRET_LEN = 8  # shorter values would redact ordinary text; keys are far longer


def _marker(name: str) -> bytes:
    return f"[REDACTED:{name}]".encode()


class Redactor:
    """Replaces each known secret value with `[REDACTED:NAME]`, in bytes or text."""

    def __init__(self, secrets: Mapping[str, str] | Iterable[str]) -> None:
        items = secrets.items() if isinstance(secrets, Mapping) else ((f"secret{i}", s) for i, s in enumerate(secrets))
        pairs = {v.encode(): _marker(k) for k, v in items if v and len(v) >= MIN_SECRET_LEN}
        # Longest first, so a key that contains another is replaced whole.
        self._pairs = sorted(pairs.items(), key=lambda kv: len(kv[0]), reverse=True)
        self.longest = max((len(s) for s, _ in self._pairs), default=0)

    def __bool__(self) -> bool:
        return bool(self._pairs)

    def bytes(self, data: bytes) -> bytes:
        for secret, marker in self._pairs:
            if secret in data:
                data = data.replace(secret, marker)
        return data

    def text(self, text: str) -> str:
        return self.bytes(text.encode("utf-8", "surrogateescape")).decode("utf-8", "surrogateescape")

    def contains_secret(self, data: builtins.bytes) -> bool:  # `bytes` here is the method above
        return any(secret in data for secret, _ in self._pairs)


class RedactingPump:
    """Copies a pipe to a file, redacting secrets, including ones split across reads.

    Use `write_fd` as the child's stdout/stderr; call `close_writer()` once the child is started
    (or ended) and `join()` after every process holding the pipe is gone.
    """

    def __init__(self, out_path: str | os.PathLike[str], redactor: Redactor, *, chunk: int = 65536) -> None:
        self.redactor = redactor
        self.read_fd, self.write_fd = os.pipe()
        self._out = open(out_path, "ab")
        self._chunk = chunk
        self._thread = threading.Thread(target=self._run, name="redacting-pump", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        keep = max(0, self.redactor.longest - 1)
        buf = b""
        try:
            while True:
                data = os.read(self.read_fd, self._chunk)
                if not data:
                    break
                buf = self.redactor.bytes(buf + data)
                # Flush whole lines; hold back at most the tail that could be the start of a secret.
                cut = buf.rfind(b"\n") + 1
                if len(buf) - cut > keep:
                    cut = len(buf) - keep
                if cut:
                    self._out.write(buf[:cut])
                    self._out.flush()
                    buf = buf[cut:]
            if buf:
                self._out.write(self.redactor.bytes(buf))
        finally:
            self._out.flush()
            self._out.close()
            os.close(self.read_fd)

    def close_writer(self) -> None:
        if self.write_fd >= 0:
            os.close(self.write_fd)
            self.write_fd = -1

    def join(self, timeout: float = 30.0) -> None:
        self.close_writer()
        self._thread.join(timeout)

    @contextlib.contextmanager
    def joined(self, timeout: float = 30.0) -> Iterator[RedactingPump]:
        """The pump, joined when the block ends however it ends (the writer's end closed on the way out)."""
        try:
            yield self
        finally:
            self.join(timeout)


def scrub_tree(root: str | os.PathLike[str], redactor: Redactor, *, max_bytes: int = 64 * 1024 * 1024) -> list[Path]:
    """Rewrite every file under `root` that contains a secret, with the secret redacted; returns them.

    Files larger than `max_bytes` (model weights) are read in overlapping windows and, if a secret
    is found, redacted in place chunk by chunk (same length is not needed: they are rewritten whole).
    """
    if not redactor:
        return []
    changed = []
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = Path(dirpath) / name
            try:
                if path.is_symlink() or not path.is_file():
                    continue
                if path.stat().st_size > max_bytes:
                    if not _large_file_has_secret(path, redactor):
                        continue
                data = path.read_bytes()
            except OSError:
                continue
            if redactor.contains_secret(data):
                tmp = path.with_name(f".{name}.redacting")
                try:
                    mode = path.stat().st_mode & 0o7777
                    tmp.write_bytes(redactor.bytes(data))
                    os.chmod(tmp, mode)
                    os.replace(tmp, path)
                except OSError:
                    # Cannot rewrite it (read-only folder, full disk): remove the secret-bearing file instead.
                    for leftover in (tmp, path):
                        try:
                            leftover.unlink(missing_ok=True)
                        except OSError:
                            pass
                changed.append(path)
    return changed


def _large_file_has_secret(path: Path, redactor: Redactor, window: int = 8 * 1024 * 1024) -> bool:
    overlap = max(0, redactor.longest - 1)
    tail = b""
    with open(path, "rb") as fh:
        while block := fh.read(window):
            if redactor.contains_secret(tail + block):
                return True
            tail = block[-overlap:] if overlap else b""
    return False
