"""`bwrap`: bubblewrap gives the agent its own filesystem view, /tmp, and PID namespace (no root daemon).

The view: the system directories read-only, the python installation, the CLI and the base model
read-only, the workspace, the private HOME and the HF cache writable, each at its host path (so
paths in the prompt are right). Nothing else of the host (other trials, the repo's .env, the
user's real home) exists inside. The network is shared: the agent must reach its API.

The watchdog still stops everything: bwrap runs as the runner's child, and every process in the
sandbox is a descendant of it on the host (PID namespaces nest), so the runner, a subreaper, sees
and signals them all; `--die-with-parent` ends the sandbox if the runner itself is killed.
"""

from __future__ import annotations

import glob
import os
import shutil
from pathlib import Path

from ptbench.core.errors import UserError
from ptbench.sandbox.request import SandboxCommand, SandboxRequest

SYSTEM_READ_ONLY = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/run/systemd/resolve")


def bwrap_executable() -> str:
    found = shutil.which("bwrap")
    if not found:
        raise UserError("sandbox 'bwrap' needs bubblewrap: install it (apt-get install bubblewrap) or use sandbox: none")
    return found


def _nested_last(paths: list[tuple[str, Path]]) -> list[tuple[str, Path]]:
    """Parents before children, so a writable workspace inside a read-only tree stays writable."""
    seen: dict[Path, str] = {}
    for kind, p in paths:
        seen[p] = "bind" if kind == "bind" or seen.get(p) == "bind" else kind
    return sorted(((k, p) for p, k in seen.items()), key=lambda kp: len(kp[1].parts))


def bwrap_command(req: SandboxRequest, *, bwrap: str | None = None) -> SandboxCommand:
    opts = req.options
    argv = [bwrap or bwrap_executable(), "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for d in SYSTEM_READ_ONLY:
        argv += ["--ro-bind-try", d, d]
    argv += ["--ro-bind-try", "/sys", "/sys"]
    for dev in sorted(glob.glob("/dev/nvidia*")) + sorted(glob.glob("/dev/dri")):
        argv += ["--dev-bind", dev, dev]
    mounts: list[tuple[str, Path]] = []
    for p in req.read_only + [Path(x) for x in opts.get("read_only", [])]:
        mounts.append(("ro-bind", Path(p).resolve()))
    for p in [req.workspace, req.home, *req.writable, *[Path(x) for x in opts.get("writable", [])]]:
        mounts.append(("bind", Path(p).resolve()))
    for kind, p in _nested_last(mounts):
        if p.exists():
            argv += [f"--{kind}", str(p), str(p)]
    argv += ["--chdir", str(req.workspace.resolve())]
    argv += [str(a) for a in opts.get("extra_args", [])]
    argv += ["--", *req.argv]
    env = dict(req.env)
    env.setdefault("TMPDIR", "/tmp")
    return SandboxCommand(argv=argv, env=env, cwd=req.workspace)


def python_paths() -> list[Path]:
    """The running python's installation (a venv and its base), which the agent's tools use."""
    import sys

    return sorted({Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(), Path(os.path.realpath(sys.executable)).parent.parent})
