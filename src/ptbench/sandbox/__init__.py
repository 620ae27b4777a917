"""How an agent's command runs: `none` (plain subprocess), `bwrap` (bubblewrap), `apptainer` (clusters).

Each sandbox's command line is built in exactly one place (`none.py`, `bwrap.py`, `apptainer.py`)
from one `SandboxRequest`, by the function registered under its name in `SANDBOXES`
(sandbox/request.py); the runner starts the result under its watchdog. (`codeexec.py`, the fence
for executing generated code during evaluation, is separate.)
"""

from __future__ import annotations

from ptbench.sandbox.request import SANDBOXES, SandboxCommand, SandboxRequest


def build_command(kind: str, req: SandboxRequest) -> SandboxCommand:
    """The command line (and environment) that runs `req.argv` inside sandbox `kind`."""
    return SANDBOXES.get(kind)(req)


__all__ = ["SANDBOXES", "SandboxCommand", "SandboxRequest", "build_command"]
