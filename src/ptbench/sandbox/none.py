"""`none`: the agent runs as a plain subprocess (its own session, scoped environment, private HOME)."""

from __future__ import annotations

from ptbench.sandbox.request import SandboxCommand, SandboxFacts, SandboxRequest, register_sandbox

JOURNAL_CANNOT_SEE = (
    "sandbox none: writes outside workspace/ and home/ (e.g. /tmp, /dev/shm, the shared HF cache, anywhere "
    "the runner's user may write) are not journaled",
    "sandbox none: the agent runs as the runner's user, so it can read and change the journal itself",
)


@register_sandbox("none", SandboxFacts(isolates=False, cannot_see=JOURNAL_CANNOT_SEE))
def none_command(req: SandboxRequest) -> SandboxCommand:
    return SandboxCommand(argv=list(req.argv), env=dict(req.env), cwd=req.workspace)
