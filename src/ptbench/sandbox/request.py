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


def _load_builtin() -> None:
    import ptbench.sandbox.apptainer
    import ptbench.sandbox.bwrap
    import ptbench.sandbox.none  # noqa: F401


SANDBOXES: Registry[SandboxBuilder] = Registry("sandbox", load=_load_builtin)
"""sandbox kind -> the one function that builds its command line from a `SandboxRequest`."""
