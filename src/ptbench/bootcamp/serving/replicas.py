"""Where a rollout's tool-server replicas announce themselves, and the token that keeps others out.

```
OUT/tool-servers/.token             one random token per rollout run, mode 0600 (only its owner reads it)
OUT/tool-servers/replica-<i>.json   replica i: url, host, port, pid, job id, started_at, heartbeat_at
OUT/tool-servers/done               the rollout ended: every replica exits
OUT/tool-servers/jobs.json          replica i -> its pid (local), Slurm array task or HTCondor job
```
On HTCondor nobody waits for the rollout, so a replica started with `--shards N` also ends when
every shard of this run wrote `OUT/shards/shard-i-of-N.done.json` (newer than the run's token, so a
previous run's files do not count). Markers another user wrote (`done` or a shard's) are ignored.
The scheduler places (and may restart) the replicas; ptbench only finds them here and asks their
`/health`. A replica without the token refuses to start and answers 401 to a request not signed with
it, so another user's process on the node can neither call a replica nor pass for one (fail closed).
The token itself never travels: each request carries `Authorization: PTB-HMAC <ts>:<sig>`, an
HMAC-SHA256 of (time, method, path) under the token, valid for `SKEW_S`; a process that took over a
dead replica's port learns one signature for one path, not the token. It is written nowhere else:
not in rollout.json, the replica files, logs or traces. Announcements by another user are ignored.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
import time
from pathlib import Path
from typing import Any

from ptbench.core.errors import UserError
from ptbench.core.files import atomic_write_bytes
from ptbench.core.jobenv import job_identity

REPLICA_DIR = "tool-servers"
TOKEN_FILE = ".token"
DONE_FILE = "done"
IDLE_EXIT_S = 3600.0
"""A replica nobody called for this long leaves by itself (its rollout died without cancelling it)."""
SKEW_S = 300.0
"""How old (or, for clock skew between nodes, how far ahead) a request's signature may be."""


def replica_dir(out: str | Path) -> Path:
    return Path(out) / REPLICA_DIR


def replica_file(out: str | Path, index: int) -> Path:
    return replica_dir(out) / f"replica-{index}.json"


def fingerprint(token: str) -> str:
    """Names the token in a replica file without revealing it: a shard skips files of another run."""
    return hashlib.sha256(token.encode()).hexdigest()[:16]


def _mac(token: str, ts: int, method: str, path: str) -> str:
    return hmac.new(token.encode(), f"{ts}\n{method.upper()}\n{path}".encode(), hashlib.sha256).hexdigest()


def sign(token: str, method: str, path: str) -> str:
    """The Authorization header for one request."""
    ts = int(time.time())
    return f"PTB-HMAC {ts}:{_mac(token, ts, method, path)}"


def verify(token: str, header: str, method: str, path: str) -> bool:
    scheme, _, rest = header.partition(" ")
    ts_text, _, sig = rest.partition(":")
    if scheme != "PTB-HMAC" or not ts_text.isdigit() or abs(time.time() - int(ts_text)) > SKEW_S:
        return False
    return hmac.compare_digest(sig.encode(), _mac(token, int(ts_text), method, path).encode())


def new_run(out: str | Path) -> str:
    """Start a fresh set of replicas: a new token, no stale replica files, no `done` marker."""
    folder = replica_dir(out)
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("replica-*.json"):
        old.unlink()
    (folder / DONE_FILE).unlink(missing_ok=True)
    token = secrets.token_urlsafe(32)
    atomic_write_bytes(folder / TOKEN_FILE, token.encode(), mode=0o600)
    return token


def read_token(out: str | Path) -> str:
    """The rollout's token; refuses one that others can read (someone changed its mode) or none at all."""
    path = replica_dir(out) / TOKEN_FILE
    try:
        info = path.stat()
        token = path.read_text().strip()
    except FileNotFoundError:
        raise UserError(
            f"{path}: no tool-server token; start the replicas with `ptbench bootcamp rollout ... --tool-replicas N`"
        ) from None
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise UserError(
            f"{path}: readable by other users (mode {stat.S_IMODE(info.st_mode):o}); refusing it. Rerun the rollout "
            "for a new one"
        )
    if len(token) < 32:
        raise UserError(f"{path}: not a ptbench token; rerun the rollout for a new one")
    return token


def mark_done(out: str | Path) -> None:
    folder = replica_dir(out)
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(folder / DONE_FILE, b"")


def _own_stat(path: Path) -> os.stat_result | None:
    """The file's stat if this user wrote it; a marker planted by someone else is not a signal."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    return info if info.st_uid == os.getuid() else None


def is_done(out: str | Path) -> bool:
    return _own_stat(replica_dir(out) / DONE_FILE) is not None


def shards_finished(out: str | Path, shards: int) -> bool:
    """Every shard of this run wrote its final counts (`rollout.run_shard`'s `<tag>.done.json`)."""
    token = _own_stat(replica_dir(out) / TOKEN_FILE)
    if token is None:
        return False
    for i in range(shards):
        tag = f"shard-{i:05d}-of-{shards:05d}"  # datagen.Shard.tag (not imported: it pulls in the data stack)
        info = _own_stat(Path(out) / "shards" / f"{tag}.done.json")
        if info is None or info.st_mtime_ns < token.st_mtime_ns:  # older than the token: a previous run's
            return False
    return True


def rollout_finished(out: str | Path, shards: int | None = None) -> bool:
    """What ends a replica: the rollout's `done`, or (`shards`, where nobody waits) every shard's own."""
    return is_done(out) or (shards is not None and shards_finished(out, shards))


def read_replicas(out: str | Path, token: str) -> list[dict[str, Any]]:
    """The announcements of this run's replicas (files of another run's token are skipped)."""
    mine = fingerprint(token)
    found = []
    for path in sorted(replica_dir(out).glob("replica-*.json")):
        try:
            if path.stat().st_uid != os.getuid():
                continue  # someone else's file would have us sign requests for their server
            info = json.loads(path.read_text())
        except (FileNotFoundError, ValueError):
            continue  # withdrawn between glob and read; writes are atomic, so never half a file
        if isinstance(info, dict) and info.get("token_fingerprint") == mine and isinstance(info.get("replica"), int):
            found.append(info)
    return found


def scheduler_job_id() -> str | None:
    """This process's scheduler job as its scheduler's tools name it (Slurm `A_i`, HTCondor `C.P`), if
    any: the registered backends say (core/jobenv.py)."""
    return job_identity()[1]
