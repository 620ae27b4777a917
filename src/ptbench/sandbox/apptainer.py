"""`apptainer`: the agent runs in a container image on a cluster node.

`apptainer exec --containall --cleanenv` gives a private /tmp, /dev, IPC and PID namespace and no
host environment; the agent's scoped environment is passed as APPTAINERENV_* variables (so keys
never appear on a command line, in `ps`, or in a rendered submit file). `--nv` exposes the GPUs,
the workspace and the HF cache are bound at their host paths, `--home` is the trial's private
HOME, `--writable-tmpfs` lets tools write into the image's tree, and an optional read-only overlay
image carries a prefetched HF cache. Apptainer cannot run on the development machine: this
command line is pinned by golden files in tests/sandbox/.
"""

from __future__ import annotations

from pathlib import Path

from ptbench.core.errors import UserError
from ptbench.sandbox.request import SandboxCommand, SandboxFacts, SandboxRequest, register_sandbox

JOURNAL_CANNOT_SEE = (
    "sandbox apptainer: the container's /tmp, /dev/shm and writable tmpfs live in its memory and are not journaled",
)


@register_sandbox("apptainer", SandboxFacts(isolates=True, own_image=True, cannot_see=JOURNAL_CANNOT_SEE))
def apptainer_command(req: SandboxRequest, *, apptainer: str | None = None) -> SandboxCommand:
    opts = req.options
    if req.network == "gateway":
        raise UserError(
            "sandbox network 'gateway' (loopback only, the gateway through its socket) needs sandbox: bwrap; "
            "set sandbox_options.network: host for apptainer"
        )
    image = opts.get("image")
    if not image:
        raise UserError(
            "sandbox 'apptainer' needs sandbox_options.image (a .sif file or docker:// reference) in the campaign"
        )
    argv = [
        apptainer or str(opts.get("apptainer", "apptainer")),
        "exec",
        "--containall",
        "--cleanenv",
        "--writable-tmpfs",
    ]
    if opts.get("nv", req.gpus > 0):
        argv.append("--nv")
    argv += ["--home", str(req.home), "--pwd", str(req.workspace)]
    binds = [(req.workspace, req.workspace, "rw")] + [(Path(p), Path(p), "rw") for p in req.writable]
    binds += [(Path(p), Path(p), "ro") for p in req.read_only]
    binds = [(Path(src), Path(dst), mode) for src, dst, mode in req.binds] + binds  # the HF cache layer first: it wins
    for spec in opts.get("binds", []):  # "src[:dst[:ro]]", as apptainer writes them
        parts = str(spec).split(":")
        src = Path(parts[0])
        binds.append(
            (src, Path(parts[1]) if len(parts) > 1 and parts[1] else src, parts[2] if len(parts) > 2 else "rw")
        )
    seen = set()
    for src, dst, mode in binds:
        if dst in seen:
            continue
        seen.add(dst)
        argv += ["--bind", f"{src}:{dst}" + (":ro" if mode == "ro" else "")]
    for overlay in ([opts["hf_cache_overlay"]] if opts.get("hf_cache_overlay") else []) + list(
        opts.get("overlays", [])
    ):
        argv += ["--overlay", f"{overlay}:ro" if not str(overlay).endswith((":ro", ":rw")) else str(overlay)]
    argv += [str(a) for a in opts.get("extra_args", [])]
    argv += [str(image), *req.argv]
    # The outer apptainer process needs a PATH to find itself; everything else goes in as APPTAINERENV_*.
    env = {k: v for k, v in req.env.items() if k in ("PATH", "LANG", "TERM", "PTBENCH_TRIAL_DIR")}
    # HOME comes from --home; PATH stays the image's own (the host PATH names host directories).
    env.update({f"APPTAINERENV_{k}": v for k, v in req.env.items() if k not in ("HOME", "PATH")})
    if opts.get("hf_cache_overlay") and opts.get("hf_home"):
        env["APPTAINERENV_HF_HOME"] = str(opts["hf_home"])
    return SandboxCommand(argv=argv, env=env, cwd=req.workspace)
