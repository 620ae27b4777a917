"""The digest of the container image a record was made in: `sha256:<hex>` of the .sif file.

`containers/build.sh NAME` records each image's digest, size and path in containers/digests.json.
The digest is found, in order: PTBENCH_CONTAINER_DIGEST (a site can set it in the job), the entry of
digests.json (PTBENCH_CONTAINER_DIGESTS, default the repository's) whose image has the same file name
and size, or the sha256 of the image file itself when it is readable here (once per process).
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path

DIGESTS_FILE = Path(__file__).resolve().parents[3] / "containers" / "digests.json"


def file_digest(path: str | os.PathLike[str]) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return f"sha256:{h.hexdigest()}"


def recorded_digests(path: str | os.PathLike[str] | None = None) -> dict[str, dict]:
    path = Path(path or os.environ.get("PTBENCH_CONTAINER_DIGESTS") or DIGESTS_FILE)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


@lru_cache(maxsize=8)
def _digest_of(image: str) -> str | None:
    p = Path(image)
    size = p.stat().st_size if p.is_file() else None
    for entry in recorded_digests().values():
        if (
            isinstance(entry, dict)
            and Path(str(entry.get("image", ""))).name == p.name
            and (size is None or entry.get("bytes") == size)
        ):
            return entry.get("digest")
    return file_digest(p) if size is not None and os.access(p, os.R_OK) else None


def image_digest(image: str | None) -> str | None:
    if os.environ.get("PTBENCH_CONTAINER_DIGEST"):
        return os.environ["PTBENCH_CONTAINER_DIGEST"]
    if not image:
        return None
    try:
        return _digest_of(image)
    except OSError:
        return None
