"""One generic launcher: agent.yaml + trial -> argv and a scoped environment.

The agent's process gets the non-secret variables in PASSTHROUGH_ENV, its private HOME, the
agent's own `env`, and the values of the keys its agent.yaml names: no other secret.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
from dotenv import dotenv_values

from ptbench.agents.spec import AgentSpec, agent_folder
from ptbench.core.errors import UserError
from ptbench.core.jobenv import TRIAL_ENV_MARKER
from ptbench.trial import TrialDir

if TYPE_CHECKING:
    from ptbench.agents.agent_run import AgentRun

# Non-secret variables an agent inherits; everything else (every other key above all) is dropped.
PASSTHROUGH_ENV = (
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TERM",
    "USER",
    "LOGNAME",
    "SHELL",
    "HF_HOME",
    "HF_HUB_CACHE",
    "HF_DATASETS_CACHE",
    "HF_HUB_OFFLINE",
    "TRANSFORMERS_OFFLINE",
    "HF_DATASETS_OFFLINE",
    "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "LD_LIBRARY_PATH",
    "SSL_CERT_FILE",
    "REQUESTS_CA_BUNDLE",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "OPENBLAS_CORETYPE",
    "OPENBLAS_L2_SIZE",
    "ATEN_CPU_CAPABILITY",  # kernel choice (e.g. avx2 on an AVX-512 CPU): the agent trains with the runner's
    "ONEDNN_MAX_CPU_ISA",
    "PYTHONPATH",  # the agent's python (evaluate.sh, helper agents) imports the same ptbench as the runner
)
REHEARSAL_KEY = "ptbench-rehearsal-not-a-real-key"

_JINJA = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True)


@dataclass
class Launch:
    argv: list[str]
    env: dict[str, str]
    cwd: Path
    secrets: dict[str, str] = field(default_factory=dict)  # name -> value of every secret this launch carries
    copied_auth_files: list[Path] = field(default_factory=list)  # removed again after the run


def npm_bin_dirs() -> list[Path]:
    """Where npm-installed CLIs are looked up: $PTBENCH_NPM_PREFIX, then the repo's .cache/npm."""
    dirs = []
    if os.environ.get("PTBENCH_NPM_PREFIX"):
        dirs.append(Path(os.environ["PTBENCH_NPM_PREFIX"]).expanduser() / "node_modules" / ".bin")
    dirs.append(Path(__file__).resolve().parents[3] / ".cache" / "npm" / "node_modules" / ".bin")
    return dirs


def venv_dir(name: str) -> Path:
    """A PyPI scaffold's own virtual environment: $PTBENCH_VENVS_DIR/NAME, else the repo's .cache/venvs/NAME."""
    root = os.environ.get("PTBENCH_VENVS_DIR") or str(Path(__file__).resolve().parents[3] / ".cache" / "venvs")
    return Path(root).expanduser() / name


def find_executable(spec: AgentSpec) -> str | None:
    if not spec.executable:
        return None
    if spec.venv:  # only its own venv: a `python` found on PATH would be another program
        exe = venv_dir(spec.venv) / "bin" / spec.executable
        if exe.exists():
            return str(exe)
        raise UserError(
            f"agent '{spec.name}': {spec.package or spec.venv} is not installed in {exe.parent.parent}; "
            f"install it with `{spec.install_hint}` (or set PTBENCH_VENVS_DIR to the folder holding {spec.venv}/)"
        )
    for d in npm_bin_dirs():
        if (d / spec.executable).exists():
            return str(d / spec.executable)
    found = shutil.which(spec.executable)
    if found:
        return found
    raise UserError(
        f"agent '{spec.name}': its CLI '{spec.executable}' ({spec.package or 'no package named'}) is not installed; "
        f"install it with `{spec.install_hint}` (or put it on PATH, or set PTBENCH_NPM_PREFIX to the npm prefix "
        "holding it)"
    )


def render_field(value: str, ctx: dict[str, Any], where: str) -> str:
    """One templated agent.yaml field rendered; a template error is the user's, named by `where`."""
    try:
        return _JINJA.from_string(value).render(ctx)
    except jinja2.TemplateError as exc:
        raise UserError(f"{where}: template '{value[:80]}' failed: {exc} (check the variable names)") from None


def required_keys(spec: AgentSpec, model: str | None, options: dict[str, Any], base_url: str = "") -> list[str]:
    """Key variables this agent needs with this model and options (templated entries that render empty are dropped)."""
    ctx = {"model": model or "", "options": options, "base_url": base_url}
    names = [render_field(k, ctx, f"agents/{spec.name}/agent.yaml: keys").strip() for k in spec.keys]
    for prefix, keys in spec.model_keys.items():
        if (model or "").startswith(prefix):
            names.extend(keys)
    return list(dict.fromkeys(n for n in names if n))


def template_context(
    run: AgentRun,
    *,
    prompt: str = "",
    base_url: str = "",
    keys: dict[str, str] | None = None,
) -> dict[str, Any]:
    trial, t = run.trial, run.trial.spec
    return {
        "python": sys.executable,
        "executable": run.executable or run.spec.executable or "",
        "agent_dir": str(agent_folder(run.spec.name)),  # the agent's folder (helper scripts beside agent.yaml)
        "base_model": t.base_model.path or t.base_model.id,
        "base_model_id": t.base_model.id,
        "base_model_revision": t.base_model.revision or "",
        "task": t.task.name,
        "seed": t.seed,
        "model": run.model,
        "options": run.options,
        "workspace": str(trial.workspace),
        "hours": t.budget.hours,
        "prompt": prompt,
        "prompt_file": str(trial.prompt_txt),
        "home": str(trial.home),
        "base_url": (base_url or str(run.options.get("base_url") or "")).rstrip("/"),
        "session_id": run.session.session_id or "",
        "keys": keys or {},
    }


def read_secrets(names: list[str]) -> dict[str, str]:
    """Values of the named keys from the environment, else from a git-ignored `.env` in the current directory."""
    found = {n: os.environ[n] for n in names if os.environ.get(n)}
    dotenv = Path(".env")
    if dotenv.is_file() and any(n not in found for n in names):
        values = dotenv_values(dotenv, interpolate=False)  # `export`, quotes and comments as python-dotenv reads them
        for key in names:
            value = (values.get(key) or "").strip()
            if key not in found and value:
                found[key] = value
    return found


def _auth_source(raw: str) -> Path:
    return Path(os.path.expandvars(raw)).expanduser()


def missing_requirements(
    spec: AgentSpec, model: str | None, options: dict[str, Any], *, rehearse: bool = False
) -> list[str]:
    """What stops this agent from starting here: unset keys, absent auth files (none in a rehearsal)."""
    if rehearse:
        return []
    problems = []
    keys = required_keys(spec, model, options)
    found = read_secrets(keys)
    for k in keys:
        if k not in found:
            problems.append(
                f"agent '{spec.name}' needs the key {k}: set it in the environment or in .env (or use --rehearse)"
            )
    for dest, src in spec.auth_files.items():
        if not _auth_source(src).is_file():
            problems.append(
                f"agent '{spec.name}' needs the login file {src} (copied to ~/{dest}): log in with the CLI first"
            )
    return problems


def build_launch(
    run: AgentRun,
    *,
    prompt: str = "",
    extra_env: dict[str, str] | None = None,
    resume: bool = False,
    base_url: str = "",
    gateway_token: str = "",
) -> Launch:
    """The command, environment and files of one run of the trial's agent.

    `resume` uses continue_command (with the session of `run.session`) where the agent has one;
    `base_url` points the CLI at another endpoint (the trial's gateway, a rehearsal's scripted
    provider); with a `gateway_token` every key variable holds that token and no real key is read
    (the gateway holds it); in a rehearsal every key gets a dummy value and no real key is read.
    """
    trial, spec = run.trial, run.spec
    where = f"agents/{spec.name}/agent.yaml"
    rehearsal = run.rehearsing
    key_names = run.cli_keys(base_url)
    if gateway_token:
        secrets = {k: gateway_token for k in key_names}
    elif rehearsal:
        secrets = {k: REHEARSAL_KEY for k in key_names}
    else:
        secrets = read_secrets([*key_names, *spec.optional_keys])
        missing = [k for k in key_names if k not in secrets]
        if missing:
            raise UserError(
                f"agent '{spec.name}' needs {', '.join(missing)}: set it in the environment or in .env (or rehearse "
                "with --rehearse)"
            )
    ctx = template_context(run, prompt=prompt, base_url=base_url, keys=secrets)
    session_id = run.session.session_id or ""
    command = spec.continue_command if resume and spec.continue_command and session_id else spec.command
    argv = [
        a for a in (render_field(a, ctx, f"{where}: command") for a in command) if a != "" or not spec.omit_empty_args
    ]
    env = {k: os.environ[k] for k in PASSTHROUGH_ENV if k in os.environ}
    env.update(
        HOME=str(trial.home),
        TMPDIR=str(trial.home / "tmp"),
        PYTHONUNBUFFERED="1",
        **{TRIAL_ENV_MARKER: str(trial.path)},
    )
    templated_env = {**spec.env, **(spec.rehearsal_env if rehearsal else {})}
    for k, v in templated_env.items():
        value = render_field(v, ctx, f"{where}: env.{k}")
        if value != "":
            env[k] = value
    env.update(secrets)
    env.update(extra_env or {})
    (trial.home / "tmp").mkdir(parents=True, exist_ok=True)
    for dest, content in spec.home_files.items():
        path = trial.home / dest
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render_field(content, ctx, f"{where}: home_files.{dest}"))
    copied = [] if rehearsal else _copy_auth_files(spec, trial, secrets)
    # A key a template copied into another variable (e.g. ANTHROPIC_AUTH_TOKEN) is a secret too.
    for k, v in env.items():
        if k not in secrets and v in secrets.values():
            secrets[k] = v
    return Launch(
        argv=argv, env=env, cwd=trial.workspace, secrets=secrets if not rehearsal else {}, copied_auth_files=copied
    )


def _copy_auth_files(spec: AgentSpec, trial: TrialDir, secrets: dict[str, str]) -> list[Path]:
    """Copy subscription logins into the private HOME (0600); their token values become secrets to redact."""
    import json

    copied = []
    for dest, raw in spec.auth_files.items():
        src = _auth_source(raw)
        if not src.is_file():
            raise UserError(
                f"agent '{spec.name}' needs the login file {raw} (copied to ~/{dest}): log in with the CLI first"
            )
        target = trial.home / dest
        target.parent.mkdir(parents=True, exist_ok=True)
        data = src.read_bytes()
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(target, 0o600)
        copied.append(target)
        try:
            tokens = _string_leaves(json.loads(data))
        except (ValueError, UnicodeDecodeError):
            tokens = [data.decode(errors="ignore").strip()]
        for i, tok in enumerate(t for t in tokens if len(t) >= 24 and not any(c.isspace() for c in t)):
            secrets[f"{dest}#{i}"] = tok
    return copied


def _string_leaves(obj: Any) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [s for v in obj.values() for s in _string_leaves(v)]
    if isinstance(obj, list):
        return [s for v in obj for s in _string_leaves(v)]
    return []
