"""`agents/<name>/agent.yaml`: an agent scaffold described as data, loaded by one launcher.

A variant is another folder whose agent.yaml says `extends: <parent>` and overrides some fields
(dicts such as `env`, `options` and `home_files` are merged key by key), e.g. Claude Code on an
Anthropic-compatible endpoint, or a subscription login instead of an API key.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from ptbench.core.errors import UserError
from ptbench.core.registry import Registry
from ptbench.spec.campaign import Strict

TraceFormat = Literal[
    "text", "claude-stream-json", "codex-json", "gemini-stream-json", "opencode-json", "mini-swe-json"
]
_MERGED = ("env", "options", "home_files", "auth_files", "model_keys", "rehearsal_env")


class AgentSpec(Strict):
    name: str
    description: str = ""
    extends: str | None = Field(default=None, description="parent agent whose fields this one overrides (a variant)")
    # argv, each item a Jinja template (context: see launcher.template_context)
    command: list[str] = Field(min_length=1)
    # leave out argv items that render to the empty string, so `{{ '--flag' if x else '' }}` makes a flag optional
    omit_empty_args: bool = False
    # argv for continuing an earlier session (`{{ session_id }}`, `{{ prompt }}` = the continuation message)
    continue_command: list[str] | None = None
    env: dict[str, str] = Field(
        default_factory=dict, description="extra environment (templated; empty values are left out)"
    )
    # provider key variables the agent needs; it gets these and no other secret
    keys: list[str] = Field(default_factory=list)
    optional_keys: list[str] = Field(default_factory=list)
    # keys chosen by the campaign's model: {"anthropic/": [ANTHROPIC_API_KEY]} for model anthropic/claude-...
    model_keys: dict[str, list[str]] = Field(default_factory=dict)
    # HOME-relative destination -> source file (`~` and $VARS expanded), copied with mode 0600 for
    # each run and removed afterwards, e.g. subscription logins {".codex/auth.json": "~/.codex/auth.json"}
    auth_files: dict[str, str] = Field(default_factory=dict)
    # HOME-relative destination -> templated content (CLI settings files)
    home_files: dict[str, str] = Field(default_factory=dict)
    # how the CLI is installed and which version is pinned (none for built-in agents)
    package: str | None = Field(default=None, description="npm package@version, e.g. @openai/codex@0.169.0")
    install: str | None = None
    version: str | None = None
    # a PyPI scaffold's own virtual environment, $PTBENCH_VENVS_DIR/<venv> (default .cache/venvs/<venv>):
    # `executable` is looked up in its bin/ only, never on PATH
    venv: str | None = None
    executable: str | None = Field(default=None, description="program name looked up on PATH and in the npm prefix")
    # which parser turns the native log into agent/trajectory.json
    trace_format: TraceFormat = "text"
    # whether the agent gets the full benchmark prompt (LLM agents) or none (scripted agents)
    uses_prompt: bool = False
    # the model a rehearsal (scripted provider) uses when the campaign names none
    rehearsal_model: str = "scripted"
    # extra environment only in rehearsals (e.g. fewer API retries)
    rehearsal_env: dict[str, str] = Field(default_factory=dict)
    options: dict[str, Any] = Field(default_factory=dict, description="defaults for campaign agent options")
    # The real provider behind the trial's LLM gateway (templated: model, options), as the CLI's own
    # base URL would name it; the gateway appends the request path. Empty: the agent calls no LLM.
    upstream: str = ""
    # False for subscription logins (OAuth tokens the CLI refreshes itself): they cannot be proxied.
    gateway: bool = True
    # model name the CLI sends -> name sent upstream (templated); default: the campaign's model as is
    gateway_models: dict[str, str] = Field(default_factory=dict)
    # An agent with keys that no gateway stands in for (no `upstream`) gets the real key in its own
    # environment: refused unless said here; then recorded (result.json agent_credentials) and marked
    # [real key] in tables.
    allow_real_key: bool = False

    @field_validator("command", "continue_command")
    @classmethod
    def _argv_strings(cls, v: list[str] | None) -> list[str] | None:
        if v is not None and not v[0].strip():
            raise ValueError("the first argv item is the program; it must not be empty")
        return v

    @property
    def behind_gateway(self) -> bool:
        """The trial's gateway holds the key and the agent gets a trial token instead."""
        return self.gateway and bool(self.upstream) and self.uses_prompt and not self.auth_files

    @property
    def install_hint(self) -> str:
        if self.install:
            return self.install
        if self.venv and self.package:
            return f"bash scripts/install.sh test (a venv .cache/venvs/{self.venv} with {self.package})"
        if self.package:
            return f"npm install --prefix .cache/npm --no-audit --no-fund {self.package}"
        return "install it and put it on PATH"


def agents_dirs() -> list[Path]:
    """Where agent folders are looked up: $PTBENCH_AGENTS_PATH (colon-separated), then the repo's agents/."""
    dirs = [Path(p) for p in os.environ.get("PTBENCH_AGENTS_PATH", "").split(":") if p]
    repo_agents = Path(__file__).resolve().parents[3] / "agents"
    packaged = Path(__file__).resolve().parent / "builtin"
    return [*dirs, repo_agents, packaged]


def _agent_folders() -> dict[str, Path]:
    """name -> folder; the first directory of `agents_dirs()` that has it wins."""
    found: dict[str, Path] = {}
    for d in agents_dirs():
        if d.is_dir():
            for yaml_file in sorted(d.glob("*/agent.yaml")):
                found.setdefault(yaml_file.parent.name, yaml_file.parent)
    return found


# Agents are data: found on disk at each lookup (PTBENCH_AGENTS_PATH may change), not registered by code.
AGENTS: Registry[Path] = Registry("agent", discover=_agent_folders, hint="add agents/{name}/agent.yaml")


def available_agents() -> list[str]:
    return AGENTS.names()


def agent_folder(name: str) -> Path:
    return AGENTS.get(name)


def _raw(name: str, chain: tuple[str, ...] = ()) -> dict[str, Any]:
    """The agent's YAML mapping with its `extends` chain merged in (validated later as a whole)."""
    from ptbench.core.yamlio import load_located_yaml

    path = agent_folder(name) / "agent.yaml"
    src = load_located_yaml(path)
    if not isinstance(src.data, dict):
        raise UserError(f"{path}:1: expected a mapping of keys (name, command, ...) at the top level")
    data = dict(src.data)
    parent = data.get("extends")
    if not parent:
        return data
    if parent in chain or parent == name:
        raise UserError(
            f"{path}:{src.line_of(('extends',))}: extends: '{parent}' makes a cycle "
            f"({' -> '.join((*chain, name, parent))}); point it at another agent"
        )
    base = _raw(str(parent), (*chain, name))
    merged = {**base, **data}
    for key in _MERGED:
        if isinstance(base.get(key), dict) and isinstance(data.get(key), dict):
            merged[key] = {**base[key], **data[key]}
    return merged


@cache
def load_agent(name: str) -> AgentSpec:
    from pydantic import ValidationError

    from ptbench.core.validation import describe_validation_error
    from ptbench.core.yamlio import load_located_yaml

    path = agent_folder(name) / "agent.yaml"
    data = _raw(name)
    try:
        spec = AgentSpec.model_validate(data)
    except ValidationError as exc:
        raise UserError(describe_validation_error(exc, AgentSpec, load_located_yaml(path))) from None
    if spec.name != name:
        raise UserError(f"{path}: name '{spec.name}' differs from its folder '{name}' (make them equal)")
    return spec
