"""How an agent's command runs: `none` (plain subprocess), `bwrap` (bubblewrap), `apptainer` (clusters).

Each sandbox's command line is built in exactly one place (`none.py`, `bwrap.py`, `apptainer.py`)
from one `SandboxRequest`; the runner starts the result under its watchdog. (`codeexec.py`, the
fence for executing generated code during evaluation, is separate.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ptbench.errors import UserError

SANDBOXES = ("none", "bwrap", "apptainer")


@dataclass
class SandboxRequest:
    argv: list[str]
    env: dict[str, str]
    workspace: Path  # the working directory; writable
    home: Path  # the agent's private HOME; writable
    read_only: list[Path] = field(default_factory=list)  # host paths the agent needs to read (python, CLI, base model)
    writable: list[Path] = field(default_factory=list)  # host paths it may write besides workspace/home (HF cache)
    gpus: int = 0
    options: dict[str, Any] = field(default_factory=dict)  # campaign sandbox_options


@dataclass
class SandboxCommand:
    argv: list[str]
    env: dict[str, str]
    cwd: Path  # host directory the outer process starts in


def build_command(kind: str, req: SandboxRequest) -> SandboxCommand:
    """The command line (and environment) that runs `req.argv` inside sandbox `kind`."""
    if kind == "none":
        from ptbench.sandbox.none import none_command

        return none_command(req)
    if kind == "bwrap":
        from ptbench.sandbox.bwrap import bwrap_command

        return bwrap_command(req)
    if kind == "apptainer":
        from ptbench.sandbox.apptainer import apptainer_command

        return apptainer_command(req)
    raise UserError(f"unknown sandbox '{kind}' (use one of: {', '.join(SANDBOXES)})")


__all__ = ["SANDBOXES", "SandboxCommand", "SandboxRequest", "build_command"]
