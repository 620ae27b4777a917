"""`sandbox: auto` (the default): bwrap wherever it can start a sandbox, never a silent fallback.

bwrap needs unprivileged user namespaces (or root). Where it cannot run, a trial with the default
fails with a setup error that names the choices: install bubblewrap / enable user namespaces, or
ask for `sandbox: none` explicitly — which is recorded in the result and marked in the tables.
"""

from __future__ import annotations

import shutil
import subprocess
from functools import lru_cache

from ptbench.core.errors import UserError

AUTO = "auto"
AUTO_BECOMES = "bwrap"  # the sandbox `auto` resolves to where it can start one


@lru_cache(maxsize=1)
def bwrap_usable() -> tuple[bool, str]:
    """(whether bwrap can start a sandbox with a private PID namespace here, why not)."""
    exe = shutil.which("bwrap")
    if not exe:
        return False, "bubblewrap is not installed (apt-get install bubblewrap)"
    try:
        out = subprocess.run(
            [exe, "--ro-bind", "/", "/", "--unshare-pid", "--proc", "/proc", "--dev", "/dev", "true"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"bwrap did not start ({exc})"
    if out.returncode != 0:
        why = (out.stderr.strip().splitlines() or ["no message"])[-1]
        return (
            False,
            f"bwrap cannot create a sandbox here ({why}; user namespaces may be disabled: sysctl "
            "kernel.unprivileged_userns_clone=1)",
        )
    return True, ""


def resolve_sandbox(kind: str) -> str:
    """The sandbox a trial really uses: `auto` becomes bwrap, or a setup error saying what to choose."""
    if kind != AUTO:
        return kind
    ok, why = bwrap_usable()
    if ok:
        return AUTO_BECOMES
    raise UserError(
        f"sandbox auto: {why}; fix that, or set `sandbox: none` in the campaign to run agents unsandboxed "
        "(recorded in result.json and marked in the tables), or `sandbox: apptainer`"
    )
