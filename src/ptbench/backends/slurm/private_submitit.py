"""submitit's private API, here beside the one scheduler client that uses it and nowhere else
(tests/backends/slurm/test_private_submitit.py checks each against the installed submitit, so an
upgrade that moves one fails there, loudly; the slurm extra pins submitit too).

  submitit_sbatch_script   submitit.slurm.slurm._make_sbatch_string
  SUBMITIT_SUBMIT_MODULE   python -m submitit.core._submit (what submitit's jobs run)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SUBMITIT_SUBMIT_MODULE = "submitit.core._submit"


def submitit_sbatch_script(*, command: str, folder: str | Path, map_count: int | None, **params: Any) -> str:
    """The sbatch script text submitit would submit (submitit has no public function for it), so
    `ptbench render` shows exactly what `submit` hands to sbatch."""
    from submitit.slurm.slurm import _make_sbatch_string

    return str(_make_sbatch_string(command=command, folder=folder, map_count=map_count, **params))
