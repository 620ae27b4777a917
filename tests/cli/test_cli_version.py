"""`ptbench --version`: the installed package's version, on stdout, exit 0 (as inspect and harbor do)."""

from __future__ import annotations

import subprocess
import sys

import ptbench


def test_version_prints_the_package_version():
    proc = subprocess.run([sys.executable, "-m", "ptbench", "--version"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"ptbench {ptbench.__version__}"
    assert proc.stderr == ""
