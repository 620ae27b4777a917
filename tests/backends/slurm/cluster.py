"""The dev Slurm cluster as a session fixture: started once by scripts/slurm-dev-cluster.sh.

Import `slurm_cluster` into a test module or conftest to use it. Locally, a machine where the
cluster cannot start (not root, no Slurm) skips the tests that need it; in CI (CI=true) they fail.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support import require

REPO = Path(__file__).resolve().parents[3]
SCRIPT = REPO / "scripts" / "slurm-dev-cluster.sh"


def _cluster_conf() -> tuple[str | None, str]:
    for action in ("status", "start"):
        try:
            out = subprocess.run(["bash", str(SCRIPT), action], capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return None, str(exc)
        for line in out.stdout.splitlines():
            if line.startswith("export SLURM_CONF="):
                return line.split("=", 1)[1].strip(), ""
    return None, (out.stderr.strip().splitlines() or ["no output"])[-1]


@pytest.fixture(scope="session")
def slurm_cluster() -> str:
    """SLURM_CONF of the running dev cluster (set in os.environ for the whole session)."""
    conf, why = _cluster_conf()
    require(conf is not None, f"the dev Slurm cluster is not running and could not start: {why}")
    os.environ["SLURM_CONF"] = conf
    return conf
