"""Where a record was made: ptbench version and commit, host, scheduler and job, container image."""

from __future__ import annotations

import os
import socket
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Any

from ptbench.core.images import image_digest
from ptbench.core.jobenv import job_identity

_PACKAGE_DIR = Path(__file__).resolve().parents[1]


@lru_cache(maxsize=1)
def git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=_PACKAGE_DIR, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def provenance() -> dict[str, Any]:
    """The fields of a result's `provenance` for a record written by this process now."""
    from ptbench import __version__

    scheduler, job_id = job_identity()
    image = os.environ.get("APPTAINER_CONTAINER") or os.environ.get("PTBENCH_CONTAINER_IMAGE")
    return {
        "ptbench_version": __version__,
        "git_commit": git_commit(),
        "host": socket.gethostname(),
        "scheduler": scheduler,
        "job_id": job_id,
        "container_image": image,
        "container_digest": image_digest(image),
    }
