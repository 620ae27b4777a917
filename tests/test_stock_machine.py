"""The README's two commands on a stock Debian/Ubuntu machine (issue 31, finding 1).

There, `python` does not exist and the distribution's `python3` refuses pip installs (PEP 668,
"externally managed"). scripts/venv.sh makes ptbench's own virtual environment with `python3` and
the install step installs into it. The slow test runs the quickstart's install step (`install.sh
demo`) under `env -i` with Debian's stock PATH into a venv in tmp_path, then runs `ptbench --version`
from that venv, and checks that the system's Python gained nothing.

Where the heavy wheels come from: the machine's own pip configuration (HOME is kept, so pip's user
config and cache apply, and the PIP_* variables of this process are passed on): on this project's
machines that is the CPU torch wheel on disk (find-links), the rest from pip's cache or PyPI.
PIP_NO_COMPILE=1 skips writing bytecode for torch & co. (a minute of CPU, nothing the proof needs).
PyTorch's CPU index is pointed at a closed loopback port, so the fall-back to pip's own sources is
exercised without traffic to any host but the registries.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support import require

ROOT = Path(__file__).resolve().parents[1]
STOCK_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def _stock_env(home: str, **extra: str) -> dict[str, str]:
    env = {"PATH": STOCK_PATH, "HOME": home, "LANG": "C.UTF-8"}
    env.update({k: v for k, v in os.environ.items() if k.startswith("PIP_")})
    env.update(extra)
    return env


def _venv_sh(env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", ". scripts/venv.sh && ptbench_venv && command -v python"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_no_usable_python_is_one_line_and_exit_2(tmp_path: Path) -> None:
    res = _venv_sh(_stock_env(str(tmp_path), PTBENCH_PYTHON="python3.7", PTBENCH_VENV=str(tmp_path / "v")), ROOT)
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.count("\n") == 1 and "no python3.7 on PATH" in res.stderr and "python3-venv" in res.stderr
    assert not (tmp_path / "v").exists()


def test_a_folder_that_is_not_a_venv_is_refused_and_left_alone(tmp_path: Path) -> None:
    """`python -m venv --clear` empties its folder: a PTBENCH_VENV that names someone's data must not be."""
    data = tmp_path / "mine"
    data.mkdir()
    (data / "notes.txt").write_text("keep me")
    res = _venv_sh(_stock_env(str(tmp_path), PTBENCH_VENV=str(data)), ROOT)
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.count("\n") == 1 and "is not a virtual environment" in res.stderr
    assert sorted(p.name for p in data.iterdir()) == ["notes.txt"]


def _system_python() -> str | None:
    python3 = shutil.which("python3", path=STOCK_PATH)
    if python3 is None:
        return None
    ok = subprocess.run(
        [python3, "-c", "import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))"], capture_output=True
    )
    return python3 if ok.returncode == 0 else None


def _distributions(python3: str) -> list[str]:
    """What the system's Python has installed (names and versions)."""
    code = "import importlib.metadata as m; print(sorted(f'{d.name}=={d.version}' for d in m.distributions()))"
    return subprocess.run([python3, "-c", code], capture_output=True, text=True, check=True, env={}).stdout.split()


@pytest.mark.slow
def test_the_quickstart_install_step_runs_on_a_stock_path_into_its_own_venv(tmp_path: Path) -> None:
    python3 = _system_python()
    require(
        python3 is not None,
        f"no python3 >= 3.11 with venv and ensurepip on {STOCK_PATH} (apt-get install python3-venv)",
    )
    assert python3 is not None
    home = os.environ.get("HOME", str(tmp_path))
    venv = tmp_path / "venv"
    env = _stock_env(home, PTBENCH_VENV=str(venv), PTBENCH_TORCH_INDEX="http://127.0.0.1:9/whl/cpu", PIP_NO_COMPILE="1")

    # The hostile machine, as the issue found it: the distribution's Python refuses pip installs where
    # it is marked externally managed (Debian 12, Ubuntu 24.04), and the stock PATH may have no `python`.
    before = _distributions(python3)
    refused = subprocess.run(
        [python3, "-m", "pip", "install", "--dry-run", "six"], env=env, capture_output=True, text=True, timeout=120
    )
    stdlib = subprocess.run(
        [python3, "-c", "import sysconfig; print(sysconfig.get_path('stdlib'))"], capture_output=True, text=True
    ).stdout.strip()
    marker = Path(stdlib) / "EXTERNALLY-MANAGED"
    if marker.exists() and "No module named pip" not in refused.stderr:
        assert refused.returncode != 0 and "externally-managed-environment" in refused.stderr, refused.stderr

    res = subprocess.run(
        ["bash", "scripts/install.sh", "demo"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "PyTorch's CPU index http://127.0.0.1:9/whl/cpu does not answer" in res.stderr

    # The venv was made from the stock python3 and holds ptbench, installed editable from this checkout.
    assert (venv / "pyvenv.cfg").read_text().count(f"home = {Path(python3).parent}") == 1
    version = subprocess.run(
        [str(venv / "bin" / "ptbench"), "--version"], env=env, capture_output=True, text=True, timeout=300
    )
    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith("ptbench ")
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import ptbench, torch; print(ptbench.__file__); print(torch.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert where.returncode == 0, where.stderr
    ptbench_file, torch_file = where.stdout.split()
    assert Path(ptbench_file).is_relative_to(ROOT / "src")
    assert Path(torch_file).is_relative_to(venv)

    # Nothing went into the system's Python.
    assert _distributions(python3) == before

    # A rerun reuses the venv and skips the editable install (its marker names this checkout).
    again = subprocess.run(
        ["bash", "-x", "scripts/install.sh", "demo"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert again.returncode == 0, again.stderr[-3000:]
    assert "making the virtual environment" not in again.stdout
    assert "[train,eval,plots]" not in again.stderr and "torch==2.13.0" not in again.stderr
