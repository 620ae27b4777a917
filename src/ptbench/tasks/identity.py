"""Test-set identity: a content hash of exactly the examples a task scored.

Two results can share a column only when they scored the same items the same way; the hash covers
every example's id, prompt (messages or rendered base-format text), reference and metadata, in
order, so a changed dataset revision, a local copy that differs, a different `limit`, subset or
shuffle seed all give a different hash.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ptbench.tasks.base import Example


def examples_sha256(examples: list[Example]) -> str:
    digest = hashlib.sha256()
    for ex in examples:
        row = [ex.id, ex.prompt, ex.reference, ex.meta]
        digest.update(json.dumps(row, sort_keys=True, ensure_ascii=False, default=str).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def scored_set_identity(examples: list[Example], dataset: dict[str, Any]) -> dict[str, Any]:
    """What the metrics record: the hash, the number of examples and the hub revision where pinned."""
    return {
        "sha256": examples_sha256(examples),
        "n": len(examples),
        "revision": (dataset or {}).get("revision"),
        "source": (dataset or {}).get("local_path") or (dataset or {}).get("id"),
    }
