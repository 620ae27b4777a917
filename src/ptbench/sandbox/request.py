"""What a sandbox is asked to run (`SandboxRequest`), the command line it answers with, and the
registry of sandboxes: each registers its builder where it is defined (`@SANDBOXES.register("bwrap")`),
a plugin's too; `validate` checks a campaign's `sandbox` against it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ptbench.core.registry import Registry


@dataclass
class SandboxRequest:
    argv: list[str]
    env: dict[str, str]
    workspace: Path  # the working directory; writable
    home: Path  # the agent's private HOME; writable
    read_only: list[Path] = field(default_factory=list)  # host paths the agent needs to read (python, CLI, base model)
    writable: list[Path] = field(default_factory=list)  # host paths it may write besides workspace/home (HF cache)
    binds: list[tuple[Path, Path, str]] = field(
        default_factory=list
    )  # (host source, path inside, "rw"|"ro"): the HF cache layer
    gpus: int = 0
    network: str = (
        "host"  # "gateway": a network namespace with loopback only, the gateway reached over `gateway_socket`
    )
    gateway_socket: Path | None = None  # the gateway's Unix socket (bound into the sandbox)
    gateway_port: int = 0  # the loopback port the agent's CLI calls inside the sandbox (the bridge listens there)
    options: dict[str, Any] = field(default_factory=dict)  # campaign sandbox_options
    # A host folder holding tmp/ and shm/ (the run journal watches them): under bwrap they are bound
    # at /tmp and /dev/shm and the rest of the sandbox's own tree (/, /dev) is made read-only, so
    # every place the agent can write is a folder of the trial's on the host. None: a private tmpfs /tmp.
    scratch: Path | None = None


@dataclass
class SandboxCommand:
    argv: list[str]
    env: dict[str, str]
    cwd: Path  # host directory the outer process starts in


SandboxBuilder = Callable[[SandboxRequest], SandboxCommand]


@dataclass(frozen=True)
class SandboxFacts:
    """What the rest of ptbench needs to know about a sandbox, carried by the sandbox itself (never a
    comparison against its name elsewhere: a plugin's sandbox supplies its own). The defaults are the
    cautious ones, for a sandbox registered without facts: it is treated like `none`."""

    # Its own mount namespace: the agent sees only what is bound. False: it runs as the runner's user
    # and reaches the host (the result is marked unsandboxed; nothing the agent could write is trusted).
    isolates: bool = False
    # It runs a container image that brings the agent CLIs (they need not be on the host; the host
    # needs apptainer).
    own_image: bool = False
    # It can give the agent a loopback-only network namespace (`sandbox_options.network: gateway`).
    gateway_network: bool = False
    # What the run journal cannot see under it (runner/journal.py records it in the check's details).
    cannot_see: tuple[str, ...] = ()
    # Why this node cannot build it (None: it can): a setup failure before the agent starts, never an
    # unsandboxed run.
    unavailable: Callable[[], str | None] | None = None


def register_sandbox(name: str, facts: SandboxFacts) -> Callable[[SandboxBuilder], SandboxBuilder]:
    """`@register_sandbox("bwrap", SandboxFacts(...))` on the builder: registers it with its facts."""

    def deco(builder: SandboxBuilder) -> SandboxBuilder:
        setattr(builder, "facts", facts)  # noqa: B010  (a function carries no typed attributes)
        SANDBOXES.add(name, builder)
        return builder

    return deco


def sandbox_facts(kind: str) -> SandboxFacts:
    """The facts of sandbox `kind` (`auto`: those of the sandbox it becomes, or the trial does not
    start). A name no longer registered (a result written with a plugin since removed) gets the
    cautious defaults: unknown containment is no containment."""
    from ptbench.core.errors import UserError
    from ptbench.sandbox.auto import AUTO, AUTO_BECOMES

    try:
        builder = SANDBOXES.get(AUTO_BECOMES if kind == AUTO else kind)
    except UserError:
        return SandboxFacts()
    facts = getattr(builder, "facts", None)
    return facts if isinstance(facts, SandboxFacts) else SandboxFacts()


def _load_builtin() -> None:
    import ptbench.sandbox.apptainer
    import ptbench.sandbox.bwrap
    import ptbench.sandbox.none  # noqa: F401


SANDBOXES: Registry[SandboxBuilder] = Registry("sandbox", load=_load_builtin)
"""sandbox kind -> the one function that builds its command line from a `SandboxRequest` (its
`SandboxFacts` on it: `register_sandbox`)."""


def reach_note(sandbox: str, options: Any, path: Path) -> str:
    """'' when `path` (in the harness-only evaluation cache, which no sandbox binds) is out of the
    agent's reach under this sandbox and these sandbox options; else why it is not. Under a sandbox
    that does not isolate, the agent runs as the runner's user and could write it."""
    if not sandbox_facts(sandbox).isolates:
        return f"not used under sandbox: {sandbox} (the agent runs as the runner's user and could write it)"
    for bound in _option_paths(options):
        if _overlaps(bound, path):
            return f"not used: sandbox option path {bound} covers it"
    return ""


def _option_paths(value: Any) -> list[Path]:
    """Absolute paths named anywhere in the sandbox options (binds as "src[:dst[:ro]]")."""
    if isinstance(value, dict):
        return [p for v in value.values() for p in _option_paths(v)]
    if isinstance(value, list | tuple):
        return [p for v in value for p in _option_paths(v)]
    if isinstance(value, str) and value.startswith("/"):
        return [Path(part) for part in value.split(":") if part.startswith("/")]
    return []


def _overlaps(a: Path, b: Path) -> bool:
    a, b = a.resolve(), b.resolve()
    return a == b or a.is_relative_to(b) or b.is_relative_to(a)
