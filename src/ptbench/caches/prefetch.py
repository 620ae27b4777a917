"""`ptbench cache prefetch`: download models and datasets at pinned revisions into a cache.

huggingface_hub's `snapshot_download` does the work: it skips every file already in the cache (so a
prefetch killed half-way continues with the files it had not finished) and shows progress bars.
Byte-level resume happens only inside one process: when a connection drops, huggingface_hub's
`http_get` retries with `Range: bytes=<bytes written>-` (it writes in 10 MB DOWNLOAD_CHUNK_SIZE pieces).
A killed process's partial file is never continued: since huggingface_hub 1.x
`_download_to_tmp_and_move` (file_download.py; PR #4228, against broken locks on Lustre/GPFS) opens a
new `<etag>.<8 hex>.incomplete` with mode "wb" for every download and calls `http_get` without a
`resume_size`, so the next process requests that file from byte 0 (checked against 2.4.0, and by
tests/caches). `remove_orphans` deletes the dead process's leftovers once no process holds their
download lock, so repeated interruptions do not fill the disk.
The agent cache never receives a file the evaluation list claims (whole repositories such as the
instruct models are skipped, test-split files are ignored by pattern); the evaluation cache gets
exactly the evaluation list. HF_ENDPOINT points at a mirror; with HF_HUB_OFFLINE=1 nothing is
downloaded and each resource is only looked up in the cache.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ptbench.caches.resources import PINS_FILE, EvalList, Resource, load_pins
from ptbench.core.files import atomic_write_json


@dataclass
class Fetched:
    resource: Resource
    outcome: str  # downloaded | skipped | failed
    commit: str | None = None
    files: int = 0
    bytes: int = 0
    detail: str = ""


def hub_cache(cache_home: Path) -> Path:
    """The hub folder under an HF_HOME-like root (what HF_HOME=<root> makes huggingface_hub use)."""
    return cache_home / "hub"


def _size(snapshot: Path) -> tuple[int, int]:
    files = [p for p in snapshot.rglob("*") if p.is_file()]  # snapshot entries link to blobs
    return len(files), sum(p.stat().st_size for p in files)


def remove_orphans(hub: Path) -> list[Path]:
    """Partial downloads of dead processes: `*.incomplete` whose `.locks/<repo>/<etag>.lock` is free."""
    from filelock import FileLock, Timeout  # a dependency of huggingface_hub

    removed = []
    for part in hub.glob("*--*/blobs/*.incomplete"):
        etag = part.name.split(".", 1)[0]
        lock = FileLock(str(hub / ".locks" / part.parent.parent.name / f"{etag}.lock"))
        try:
            with lock.acquire(timeout=0):
                part.unlink(missing_ok=True)
                removed.append(part)
        except Timeout:
            continue  # another process is downloading it right now
    return removed


def prefetch(
    resources: list[Resource], cache_home: str | os.PathLike[str], *, eval_list: EvalList | None, max_workers: int = 8
) -> list[Fetched]:
    """Download each resource; `eval_list` given = this is the agent cache (exclude what it claims)."""
    from huggingface_hub import snapshot_download  # ptbench[hub]

    home = Path(cache_home)
    home.mkdir(parents=True, exist_ok=True)
    pins = load_pins(home)
    remove_orphans(hub_cache(home))
    results: list[Fetched] = []
    for res in resources:
        ignore: list[str] | None = None
        if eval_list is not None:
            if eval_list.whole_repo(res.kind, res.repo):
                results.append(
                    Fetched(res, "skipped", detail="evaluation only (test set, judge reference or instruct model)")
                )
                continue
            ignore = eval_list.ignore_patterns(res.kind, res.repo) or None
        revision = res.revision or pins.get(res.key) or "main"
        try:
            path = Path(
                snapshot_download(
                    res.repo,
                    repo_type=res.kind,
                    revision=revision,
                    cache_dir=hub_cache(home),
                    ignore_patterns=ignore,
                    max_workers=max_workers,
                )
            )
        except Exception as exc:  # gated, missing, offline without a cached copy, network
            results.append(
                Fetched(
                    res, "failed", detail=f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}"
                )
            )
            continue
        commit = path.name  # snapshots/<commit>
        if res.key not in pins and not res.revision:
            pins[res.key] = commit
            atomic_write_json(home / PINS_FILE, dict(sorted(pins.items())))
        n, size = _size(path)
        results.append(Fetched(res, "downloaded", commit, n, size, f"ignored {', '.join(ignore)}" if ignore else ""))
    return results


def human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{n} B"
