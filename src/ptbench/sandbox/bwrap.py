"""`bwrap`: bubblewrap gives the agent its own filesystem view, /tmp, and PID namespace (no root daemon).

The view: the system directories read-only, the python installation, the CLI and the base model
read-only, the workspace and the private HOME writable, each at its host path (so paths in the
prompt are right), and the HF cache as the runner prepared it (`req.binds`: a per-trial
copy-on-write layer, else read-only; runner/cache_layer.py). With `req.scratch` (the agent's runs)
/tmp and /dev/shm are folders of the trial directory and the sandbox's own root and /dev are
read-only, so everything the agent writes lands where the run journal (runner/journal.py) sees it.
Nothing else of the host (other trials, the repo's .env, the user's real home) exists inside.
The network: `host` shares the host's; `gateway` gives the sandbox its own network namespace with
loopback only, and a bridge (netbridge.py) started before the agent's command forwards
127.0.0.1:<gateway port> to the gateway's Unix socket, so the agent reaches its gateway and
nothing else.

A campaign that asks for bwrap never runs unsandboxed: where bubblewrap is missing or cannot
create its namespaces (`bwrap_problem()`, probed before the agent starts), the runner fails the
trial as a retryable `setup_failed` (exit 75), like a node without its GPU.

The watchdog still stops everything: bwrap runs as the runner's child, and every process in the
sandbox is a descendant of it on the host (PID namespaces nest), so the runner, a subreaper, sees
and signals them all; `--die-with-parent` ends the sandbox if the runner itself is killed.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from pathlib import Path

from ptbench.core.errors import UserError
from ptbench.sandbox.request import SandboxCommand, SandboxFacts, SandboxRequest, register_sandbox

BWRAP_PROCESS = "bwrap"  # the name its processes carry (the outer one and the sandbox's init): runner/watchdog.py

SYSTEM_READ_ONLY = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/run/systemd/resolve",
)


def bwrap_executable() -> str:
    found = shutil.which("bwrap")
    if not found:
        raise UserError(
            "sandbox 'bwrap' needs bubblewrap: install it (apt-get install bubblewrap) or use sandbox: none"
        )
    return found


def bwrap_problem() -> str | None:
    """None where bubblewrap can build the agent's sandbox on this node, else why not (one line)."""
    exe = shutil.which("bwrap")
    if not exe:
        return "sandbox 'bwrap' asked for, but bubblewrap (bwrap) is not on this node's PATH"
    argv = [
        exe,
        "--die-with-parent",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--tmpfs",
        "/tmp",
        "--",
        "true",
    ]
    try:
        probe = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"sandbox 'bwrap' asked for, but {exe} failed to start: {exc}"
    if probe.returncode != 0:
        why = (probe.stderr.strip().splitlines() or [f"exit {probe.returncode}"])[-1][:200]
        return f"sandbox 'bwrap' asked for, but bubblewrap cannot create namespaces on this node: {why}"
    return None


def _nested_last(mounts: list[tuple[str, Path, Path]]) -> list[tuple[str, Path, Path]]:
    """Parents before children, so a writable workspace inside a read-only tree stays writable.
    One mount per path inside: a writable one wins over a read-only one, an explicit source (the
    HF cache layer) over the same path bound as itself."""
    seen: dict[Path, tuple[str, Path]] = {}
    for kind, src, dst in mounts:
        old = seen.get(dst)
        if old is None or (src != dst and old[1] == dst):
            seen[dst] = (kind, src)
        elif src == old[1] and kind == "bind":
            seen[dst] = ("bind", src)
    return sorted(((k, s, d) for d, (k, s) in seen.items()), key=lambda m: len(m[2].parts))


@register_sandbox("bwrap", SandboxFacts(isolates=True, gateway_network=True, unavailable=bwrap_problem))
def bwrap_command(req: SandboxRequest, *, bwrap: str | None = None) -> SandboxCommand:
    opts = req.options
    argv = [
        bwrap or bwrap_executable(),
        "--die-with-parent",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
    ]
    if req.scratch is not None:
        argv += ["--bind", str(req.scratch / "tmp"), "/tmp", "--bind", str(req.scratch / "shm"), "/dev/shm"]
    else:
        argv += ["--tmpfs", "/tmp"]
    if req.network == "gateway":
        argv.append("--unshare-net")  # loopback only; the gateway is reached through its socket
    for d in SYSTEM_READ_ONLY:
        argv += ["--ro-bind-try", d, d]
    argv += ["--ro-bind-try", "/sys", "/sys"]
    for dev in sorted(glob.glob("/dev/nvidia*")) + sorted(glob.glob("/dev/dri")):
        argv += ["--dev-bind", dev, dev]
    mounts: list[tuple[str, Path, Path]] = []
    for p in req.read_only + [Path(x) for x in opts.get("read_only", [])]:
        mounts.append(("ro-bind", Path(p).resolve(), Path(p).resolve()))
    for p in [req.workspace, req.home, *req.writable, *[Path(x) for x in opts.get("writable", [])]]:
        mounts.append(("bind", Path(p).resolve(), Path(p).resolve()))
    for src, dst, mode in req.binds:
        mounts.append(("bind" if mode == "rw" else "ro-bind", Path(src), Path(dst)))
    if req.network == "gateway" and req.gateway_socket is not None:
        mounts.append(("bind", req.gateway_socket, req.gateway_socket))
        bridge = Path(__file__).with_name("netbridge.py").resolve()
        mounts.append(("ro-bind", bridge, bridge))
    for kind, src, dst in _nested_last(mounts):
        if src.exists():
            argv += [f"--{kind}", str(src), str(dst)]
    if req.scratch is not None:  # the sandbox's own tmpfs root and /dev: nothing may be written there unseen
        argv += ["--remount-ro", "/dev", "--remount-ro", "/"]
    argv += ["--chdir", str(req.workspace.resolve())]
    argv += [str(a) for a in opts.get("extra_args", [])]
    argv += ["--", *(bridged(req) if req.network == "gateway" else req.argv)]
    env = dict(req.env)
    env.setdefault("TMPDIR", "/tmp")
    return SandboxCommand(argv=argv, env=env, cwd=req.workspace)


def bridged(req: SandboxRequest) -> list[str]:
    """The agent's command behind the in-sandbox bridge to the gateway (network: gateway)."""
    import sys

    if req.gateway_socket is None or not req.gateway_port:
        raise UserError(
            "sandbox network 'gateway' needs the trial gateway's socket and port (an agent with `upstream:`)"
        )
    bridge = Path(__file__).with_name("netbridge.py").resolve()
    return [
        os.path.realpath(sys.executable),
        "-I",
        str(bridge),
        str(req.gateway_port),
        str(req.gateway_socket),
        "--",
        *req.argv,
    ]


def python_paths() -> list[Path]:
    """The running python's installation (a venv and its base), which the agent's tools use."""
    import sys

    return sorted(
        {
            Path(sys.prefix).resolve(),
            Path(sys.base_prefix).resolve(),
            Path(os.path.realpath(sys.executable)).parent.parent,
        }
    )
