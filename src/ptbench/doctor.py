"""`ptbench doctor [--backend …]`: is this login or compute node ready to run trials?

Each check returns ready / warn / fail with what to fix. It looks, never changes anything, and
names keys without ever printing a value. Exit code 0 when nothing failed, 1 otherwise.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from ptbench.agents import available_agents
from ptbench.agents.launcher import find_executable, required_keys
from ptbench.agents.options import merged_options
from ptbench.agents.spec import load_agent
from ptbench.core.errors import UserError
from ptbench.core.images import DIGESTS_FILE, recorded_digests
from ptbench.core.preflight import Check, probe
from ptbench.node import nvml
from ptbench.node.cgroup import cgroup_problem
from ptbench.runner.cache_layer import probe_overlay
from ptbench.sandbox.request import sandbox_facts


def check_userns() -> Check:
    knob = Path("/proc/sys/user/max_user_namespaces")
    n = int(knob.read_text()) if knob.exists() else -1
    clone = Path("/proc/sys/kernel/unprivileged_userns_clone")
    if n == 0 or (clone.exists() and clone.read_text().strip() == "0"):
        return Check(
            "user namespaces",
            "fail",
            "disabled by the kernel",
            "ask the admins for user.max_user_namespaces > 0 (bwrap and apptainer need them)",
        )
    return Check(
        "user namespaces", "ready", f"max_user_namespaces={n}" if n >= 0 else "no limit knob (assumed enabled)"
    )


def check_bwrap() -> Check:
    exe = shutil.which("bwrap")
    if not exe:
        return Check("bubblewrap", "fail", "bwrap not on PATH", "apt-get install bubblewrap (or use the agent image)")
    rc, out = probe(
        [exe, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "true"]
    )
    if rc != 0:
        return Check(
            "bubblewrap",
            "fail",
            f"{exe} cannot create a sandbox: {out[-200:]}",
            "enable unprivileged user namespaces, or use sandbox: apptainer",
        )
    return Check("bubblewrap", "ready", f"{exe}: a sandbox with its own namespaces starts")


def check_cgroup() -> Check:
    parent, why = cgroup_problem()
    if parent is None:
        return Check(
            "trial cgroup",
            "warn",
            f"none: {why}; the deadline uses the subreaper sweep alone",
            "delegate a cgroup v2 subtree to this user (systemd Delegate=yes, Slurm cgroup/v2) for cgroup.kill at the "
            "deadline",
        )
    return Check(
        "trial cgroup",
        "ready",
        f"trial cgroups under {parent}: the deadline kills each trial's processes with cgroup.kill",
    )


def check_apptainer(required: bool) -> Check:
    exe = shutil.which("apptainer") or shutil.which("singularity")
    if not exe:
        return Check(
            "apptainer",
            "fail" if required else "warn",
            "not on PATH",
            "module load apptainer (needed for sandbox: apptainer and the images)",
        )
    rc, out = probe([exe, "--version"])
    return Check("apptainer", "ready" if rc == 0 else "fail", out.splitlines()[0] if out else exe)


def check_fuse_overlayfs() -> Check:
    """Whether the agent's HF cache can be its per-trial copy-on-write layer here: a real mount is tried."""
    problem = probe_overlay()
    if problem:
        return Check(
            "fuse-overlayfs",
            "warn",
            f"{problem}: the agent's HF cache will be bound read-only",
            "apt-get install fuse-overlayfs fuse3 and expose /dev/fuse (copy-on-write HF cache layers; in the agent "
            "image)",
        )
    return Check(
        "fuse-overlayfs", "ready", f"{shutil.which('fuse-overlayfs')}: a per-trial copy-on-write HF cache layer mounts"
    )


def check_gpus(wanted: int) -> Check:
    try:
        d = nvml.driver()
        nv = nvml.init()
        try:
            gpus = nvml.visible_gpus(nv)
        finally:
            nvml.shutdown()
    except Exception as exc:
        status = "fail" if wanted else "warn"
        return Check(
            "GPU and driver",
            status,
            f"no usable NVML: {exc}",
            "on a GPU node: pip install 'ptbench[node]' and check the driver (nvidia-smi)"
            if wanted
            else "fine on a login node",
        )
    names = ", ".join(sorted({g.name for g in gpus})) or "none visible"
    detail = f"driver {d.driver_version}, CUDA {d.cuda_version}; {len(gpus)} GPU(s): {names}"
    busy = [g.index for g in gpus if g.processes]
    if len(gpus) < wanted:
        return Check(
            "GPU and driver",
            "fail",
            detail,
            f"{wanted} GPU(s) wanted here; check CUDA_VISIBLE_DEVICES and the job's request",
        )
    if busy:
        return Check(
            "GPU and driver",
            "warn",
            detail + f"; GPU(s) {busy} in use by other processes",
            "a trial started now would fail its node check",
        )
    return Check("GPU and driver", "ready", detail)


def check_images() -> list[Check]:
    digests = recorded_digests()
    if not digests:
        return [
            Check(
                "images",
                "warn",
                f"no image recorded in {os.environ.get('PTBENCH_CONTAINER_DIGESTS') or DIGESTS_FILE}",
                "bash containers/build.sh agent && bash containers/build.sh eval",
            )
        ]
    out = []
    for name, entry in sorted(digests.items()):
        if not isinstance(entry, dict):
            out.append(
                Check(
                    f"image {name}", "fail", "unreadable entry in the digests file", f"bash containers/build.sh {name}"
                )
            )
            continue
        image = Path(str(entry.get("image", "")))
        if not image.is_file():
            out.append(
                Check(f"image {name}", "fail", f"{image} is missing", f"rebuild it: bash containers/build.sh {name}")
            )
        elif image.stat().st_size != entry.get("bytes"):
            out.append(
                Check(
                    f"image {name}",
                    "fail",
                    f"{image} changed since its digest was recorded",
                    f"bash containers/build.sh {name}",
                )
            )
        else:
            out.append(Check(f"image {name}", "ready", f"{image} {entry.get('digest', '?')[:19]}…"))
    return out


def check_caches() -> list[Check]:
    out = []
    agent = Path(
        os.environ.get("PTBENCH_AGENT_HF_HOME") or os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface"
    )
    ev = Path(os.environ.get("PTBENCH_EVAL_HF_HOME") or Path.home() / ".cache" / "ptbench-eval-hf")
    for label, path, fix in (
        ("agent cache", agent, "ptbench cache prefetch"),
        ("evaluation cache", ev, "ptbench cache prefetch --eval"),
    ):
        if not (path / "hub").is_dir():
            out.append(Check(label, "warn", f"{path}: nothing prefetched", fix))
            continue
        repos = len([p for p in (path / "hub").iterdir() if "--" in p.name])
        free = shutil.disk_usage(path).free
        out.append(
            Check(
                label,
                "ready" if free > 50e9 else "warn",
                f"{path}: {repos} repositories, {free / 1e9:.0f} GB free",
                "" if free > 50e9 else "less than 50 GB free for checkpoints and downloads",
            )
        )
    offline = os.environ.get("HF_HUB_OFFLINE") == "1"
    out.append(
        Check(
            "hub access",
            "ready",
            "HF_HUB_OFFLINE=1: only the caches are used"
            if offline
            else f"online ({os.environ.get('HF_ENDPOINT', 'https://huggingface.co')}); "
            "set HF_HUB_OFFLINE=1 on nodes without network",
        )
    )
    return out


def check_backend(backend: str, options: dict | None = None) -> list[Check]:
    """The backend's own preflight (backends/*: its scheduler answers, its client library is installed)."""
    from ptbench.backends import get_backend

    return get_backend(backend, options).preflight()


def _agent_specs(agents: list[tuple[str, str | None, dict]] | None) -> list[tuple[str, str | None, dict]]:
    """(name, model, options) of the campaign's agents, else of every agent with default options."""
    if agents is not None:
        return agents
    return [(name, None, {}) for name in available_agents()]


def check_agent_clis(agents: list[tuple[str, str | None, dict]] | None = None) -> list[Check]:
    """Each agent CLI found where its launcher looks (`find_executable`), a row per CLI: a campaign's
    agents must have theirs (fail); without a campaign a missing one only matters to campaigns using it
    (warn)."""
    needed = agents is not None
    users: dict[str, list[str]] = {}  # CLI -> the agents that run it
    found: dict[str, str | None] = {}  # CLI -> its path, None when missing
    hints: dict[str, str] = {}
    out = []
    for name, _, _ in _agent_specs(agents):
        try:
            spec = load_agent(name)
        except UserError as exc:
            out.append(Check(f"agent {name}", "fail", str(exc), f"fix agents/{name}/agent.yaml"))
            continue
        if not spec.executable:  # built into ptbench (reference, base-model)
            continue
        cli = spec.venv or spec.executable  # a PyPI scaffold: its own venv
        users.setdefault(cli, []).append(name)
        if cli not in found:
            hints[cli] = spec.install_hint
            try:
                found[cli] = find_executable(spec)
            except UserError:
                found[cli] = None
    for cli, names in sorted(users.items()):
        used_by = f"for {', '.join(names)}"
        if found[cli]:
            out.append(Check(f"agent CLI {cli}", "ready", f"{found[cli]} ({used_by})"))
        else:
            fix = hints[cli] if needed else f"{hints[cli]} (only campaigns using it need it)"
            out.append(Check(f"agent CLI {cli}", "fail" if needed else "warn", f"not installed ({used_by})", fix))
    return out


def check_keys(agents: list[tuple[str, str | None, dict]] | None = None) -> list[Check]:
    """Provider keys by name: present or not, never their values. A campaign's agents must have theirs
    (fail); without a campaign a missing key only matters to campaigns using that agent (warn)."""
    needed = agents is not None
    out = []
    for name, model, options in _agent_specs(agents):
        try:
            spec = load_agent(name)
            keys = required_keys(spec, model, merged_options(spec, options))
        except Exception:
            continue
        if not keys:
            continue
        missing = [k for k in keys if not os.environ.get(k)]
        fix = f"export {missing[0]}=… or add it to .env" if missing else ""
        out.append(
            Check(
                f"keys {name}",
                ("fail" if needed else "warn") if missing else "ready",
                f"missing {', '.join(missing)}" if missing else f"{', '.join(keys)} set",
                fix if needed or not missing else f"{fix} (only campaigns using {name} need it)",
            )
        )
    return out


def run_checks(
    backend: str = "local",
    gpus: int = 0,
    sandbox: str = "bwrap",
    agents: list[tuple[str, str | None, dict]] | None = None,
    backend_options: dict | None = None,
) -> list[Check]:
    """`agents`: (name, model, options) of a campaign's agents (their CLIs and keys must be here), or
    None for every agent (a missing CLI or key is a warning). `backend_options`: the campaign's."""
    checks = [
        Check("python", "ready", f"{sys.version.split()[0]} at {sys.executable}"),
        check_userns(),
        check_bwrap(),
        check_cgroup(),
        check_apptainer(required=sandbox_facts(sandbox).own_image),
        check_fuse_overlayfs(),
        check_gpus(gpus),
        *check_images(),
        *check_caches(),
        *check_backend(backend, backend_options),
        *check_agent_clis(agents),
        *check_keys(agents),
    ]
    return [c for c in checks if c is not None]


def summary(checks: list[Check]) -> str:
    """'17 passed, 3 warnings, 1 failed: fix …': never "all passed" beside a warning."""
    n = {s: sum(c.status == s for c in checks) for s in ("ready", "warn", "fail")}
    line = f"{n['ready']} passed, {n['warn']} warning(s), {n['fail']} failed (of {len(checks)} checks)"
    failed = [c.area for c in checks if c.status == "fail"]
    return line + (f"; fix: {', '.join(failed)}" if failed else "")
