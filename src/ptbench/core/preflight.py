"""One finding of `ptbench doctor`: ready / warn / fail, what was seen, what to fix.

Here (the lowest layer) because plugins report their own: a backend's `preflight()` returns these
for its scheduler and client, and `doctor` prints them beside its node checks.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass


@dataclass
class Check:
    area: str
    status: str  # ready | warn | fail
    detail: str
    fix: str = ""


def probe(argv: list[str], timeout: float = 20) -> tuple[int, str]:
    """Run a read-only probe (`sinfo`, `bwrap --version`): (exit code, its output), 127 when the
    program is missing and 124 when it did not answer in time; never raises."""
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        return 127, f"{argv[0]}: not found"
    except subprocess.TimeoutExpired:
        return 124, f"{' '.join(argv)}: no answer in {timeout:.0f} s"
    return out.returncode, (out.stdout + out.stderr).strip()
