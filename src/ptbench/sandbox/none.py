"""`none`: the agent runs as a plain subprocess (its own session, scoped environment, private HOME)."""

from __future__ import annotations

from ptbench.sandbox.request import SANDBOXES, SandboxCommand, SandboxRequest


@SANDBOXES.register("none")
def none_command(req: SandboxRequest) -> SandboxCommand:
    return SandboxCommand(argv=list(req.argv), env=dict(req.env), cwd=req.workspace)
