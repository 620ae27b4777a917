"""How an agent's command runs: `none` (plain subprocess), `bwrap` (bubblewrap), `apptainer` (clusters).

Each sandbox's command line is built in exactly one place (`none.py`, `bwrap.py`, `apptainer.py`)
from one `SandboxRequest`; the runner starts the result under its watchdog. (`codeexec.py`, the
fence for executing generated code during evaluation, is separate.)
"""

from __future__ import annotations

from ptbench.core.errors import UserError
from ptbench.sandbox.apptainer import apptainer_command
from ptbench.sandbox.bwrap import bwrap_command
from ptbench.sandbox.none import none_command
from ptbench.sandbox.request import SandboxCommand, SandboxRequest

SANDBOXES = ("none", "bwrap", "apptainer")


def build_command(kind: str, req: SandboxRequest) -> SandboxCommand:
    """The command line (and environment) that runs `req.argv` inside sandbox `kind`."""
    if kind == "none":
        return none_command(req)
    if kind == "bwrap":
        return bwrap_command(req)
    if kind == "apptainer":
        return apptainer_command(req)
    raise UserError(f"unknown sandbox '{kind}' (use one of: {', '.join(SANDBOXES)})")


__all__ = ["SANDBOXES", "SandboxCommand", "SandboxRequest", "build_command"]
