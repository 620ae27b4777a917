"""scripts/gpu-smoke.sh and scripts/gpu-wheels.sh, as far as a machine without a GPU can check them.

What needs the GPU (the doctor's GPU check, the reference recipe on CUDA, the monitor's NVML
samples) runs only on a GPU machine (`bash scripts/gpu-smoke.sh` there); here: both scripts are
shellcheck-clean, and the smoke script refuses a machine without a GPU with one line and exit 2
before it installs or writes anything. Building the wheel folder needs the package registry, so it
is checked by hand (`bash scripts/gpu-wheels.sh` prints its size), not in the suite.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.support import require

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = [REPO / "scripts" / "gpu-smoke.sh", REPO / "scripts" / "gpu-wheels.sh"]


def test_gpu_scripts_are_shellcheck_clean() -> None:
    shellcheck = shutil.which("shellcheck")
    require(shellcheck is not None, "shellcheck is not installed (bash scripts/install.sh test installs it)")
    run = subprocess.run([str(shellcheck), *map(str, SCRIPTS)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_gpu_smoke_without_a_gpu_is_one_clear_line(tmp_path: Path) -> None:
    import torch

    if torch.cuda.is_available():  # a GPU machine runs the script for real instead
        return
    work = tmp_path / "smoke"
    env = {**os.environ, "GPU_SMOKE_DIR": str(work), "CUDA_VISIBLE_DEVICES": ""}
    run = subprocess.run(
        ["bash", str(SCRIPTS[0]), str(tmp_path / "no-wheels")], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert run.returncode == 2, run.stdout + run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: no NVIDIA GPU"), run.stderr
    assert "run this on a machine with one NVIDIA GPU" in lines[0]
    assert not work.exists()  # nothing installed, nothing written


def test_gpu_smoke_without_the_wheel_folder_says_how_to_build_it(tmp_path: Path) -> None:
    """Past the GPU check, a missing wheel folder is one line naming the script that builds it. The GPU
    cannot be had here, so a stand-in `torch` module (first on PYTHONPATH) says it sees one: a mock at
    the one seam this machine cannot run."""
    fake = tmp_path / "fake-torch" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        "__version__ = 'stand-in'\n"
        "class version:\n    cuda = '12.8'\n"
        "class cuda:\n"
        "    is_available = staticmethod(lambda: True)\n"
        "    get_device_name = staticmethod(lambda i: 'Stand-in GPU')\n"
    )
    work = tmp_path / "smoke"
    pythonpath = os.pathsep.join(filter(None, [str(fake.parent), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "GPU_SMOKE_DIR": str(work), "PYTHONPATH": pythonpath}
    run = subprocess.run(
        ["bash", str(SCRIPTS[0]), str(tmp_path / "no-wheels")], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert run.returncode == 2, run.stdout + run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: no wheel folder {tmp_path / 'no-wheels'}"), run.stderr
    assert "bash scripts/gpu-wheels.sh" in lines[0]
    assert not work.exists()
