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


def unreachable_conf(conf: str, folder: Path) -> Path:
    """A copy of the cluster's config (in `folder`) whose controller port nobody listens on: what a
    client sees when slurmctld is down. MessageTimeout=2: the client gives up on the refused
    connection after about a second instead of Slurm's default 10 s (it retries until then)."""
    folder.mkdir(parents=True, exist_ok=True)
    dropped = ("SlurmctldPort=", "MessageTimeout=")
    lines = [ln for ln in Path(conf).read_text().splitlines() if not ln.startswith(dropped)]
    (folder / "slurm.conf").write_text("\n".join([*lines, "SlurmctldPort=6899", "MessageTimeout=2"]) + "\n")
    (folder / "gres.conf").write_text((Path(conf).parent / "gres.conf").read_text())
    return folder / "slurm.conf"


@pytest.fixture(scope="session")
def slurm_cluster() -> str:
    """SLURM_CONF of the running dev cluster (set in os.environ for the whole session)."""
    conf, why = _cluster_conf()
    require(conf is not None, f"the dev Slurm cluster is not running and could not start: {why}")
    os.environ["SLURM_CONF"] = conf
    return conf
