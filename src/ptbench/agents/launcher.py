"""One generic launcher: agent.yaml + trial -> argv and a scoped environment."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from ptbench.agents.spec import AgentSpec, load_agent
from ptbench.errors import UserError
from ptbench.runner.watchdog import TRIAL_ENV_MARKER
from ptbench.trial import TrialDir

# Non-secret variables an agent inherits; everything else (every other key above all) is dropped.
PASSTHROUGH_ENV = (
    "PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM", "USER", "LOGNAME", "SHELL",
    "HF_HOME", "HF_HUB_CACHE", "HF_DATASETS_CACHE", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE",
    "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
    "VIRTUAL_ENV", "CONDA_PREFIX", "LD_LIBRARY_PATH", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE",
    "http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
    "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
)

_JINJA = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)


@dataclass
class Launch:
    argv: list[str]
    env: dict[str, str]
    cwd: Path


def template_context(trial: TrialDir, spec: AgentSpec, *, prompt: str = "") -> dict[str, Any]:
    t = trial.spec
    options = {**spec.options, **t.agent.options}
    return {
        "python": sys.executable,
        "base_model": t.base_model.path or t.base_model.id,
        "base_model_id": t.base_model.id,
        "base_model_revision": t.base_model.revision or "",
        "task": t.task.name,
        "seed": t.seed,
        "model": t.agent.model or "",
        "options": options,
        "workspace": str(trial.workspace),
        "hours": t.budget.hours,
        "prompt": prompt,
        "prompt_file": str(trial.prompt_txt),
        "home": str(trial.home),
    }


def _render(value: str, ctx: dict[str, Any], where: str) -> str:
    try:
        return _JINJA.from_string(value).render(ctx)
    except jinja2.TemplateError as exc:
        raise UserError(f"{where}: template '{value}' failed: {exc} (check the variable names)") from None


def read_secrets(names: list[str]) -> dict[str, str]:
    """Values of the named keys from the environment, else from a git-ignored `.env` in the current directory."""
    found = {n: os.environ[n] for n in names if os.environ.get(n)}
    dotenv = Path(".env")
    if dotenv.is_file():
        for line in dotenv.read_text().splitlines():
            key, sep, val = line.strip().partition("=")
            key = key.removeprefix("export ").strip()
            if sep and key in names and key not in found:
                found[key] = val.strip().strip("'\"")
    return found


def build_launch(trial: TrialDir, *, prompt: str = "", extra_env: dict[str, str] | None = None, resume: bool = False) -> Launch:
    spec = load_agent(trial.spec.agent.name)
    ctx = template_context(trial, spec, prompt=prompt)
    where = f"agents/{spec.name}/agent.yaml"
    command = spec.continue_command if resume and spec.continue_command else spec.command
    argv = [_render(a, ctx, where) for a in command]
    env = {k: os.environ[k] for k in PASSTHROUGH_ENV if k in os.environ}
    env.update(
        HOME=str(trial.home),
        TMPDIR=str(trial.home / "tmp"),
        PYTHONUNBUFFERED="1",
        **{TRIAL_ENV_MARKER: str(trial.path)},
    )
    env.update({k: _render(v, ctx, where) for k, v in spec.env.items()})
    env.update(read_secrets([*spec.keys, *spec.optional_keys]))
    env.update(extra_env or {})
    return Launch(argv=argv, env=env, cwd=trial.workspace)
