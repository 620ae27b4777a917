"""`agents/<name>/agent.yaml`: an agent scaffold described as data, loaded by one launcher.

A variant is another folder whose agent.yaml says `extends: <parent>` and overrides some fields
(dicts such as `env`, `options` and `home_files` are merged key by key), e.g. Claude Code on an
Anthropic-compatible endpoint, or a subscription login instead of an API key.
"""

from __future__ import annotations

import difflib
import os
import re
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from ptbench.core.errors import UserError
from ptbench.core.registry import Registry
from ptbench.spec.campaign import Strict

_NPM_PIN = re.compile(r"^(@[\w.-]+/)?[\w.-]+@\d[\w.+-]*$")  # name@1.2.3, @scope/name@1.2.3: an exact version
_PIP_PIN = re.compile(r"^[A-Za-z0-9][\w.-]*==\d[\w.+!-]*$")  # name==1.2.3
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
    # how the CLI is installed and which version is pinned (none for built-in agents): an npm
    # `package@version`, or with `venv` a PyPI `package==version`; scripts/install.sh reads the pins
    # from here (python -m ptbench.agents.pins), nothing repeats them
    package: str | None = Field(
        default=None, description="npm package@version (e.g. @openai/codex@0.169.0), or with venv: PyPI name==version"
    )
    install: str | None = None
    version: str | None = None
    # a PyPI scaffold's own virtual environment, $PTBENCH_VENVS_DIR/<venv> (default .cache/venvs/<venv>):
    # `executable` is looked up in its bin/ only, never on PATH
    venv: str | None = None
    executable: str | None = Field(default=None, description="program name looked up on PATH and in the npm prefix")
    # which parser turns the native log into agent/trajectory.json: a name registered in
    # ptbench.agents.traces.formats.TRACE_FORMATS (`text`: no structured output)
    trace_format: str = "text"
    # HOME-relative folders of the CLI's own state (session logs, caches): integrity excludes them
    # from the scan as data unless the trajectory names a file in them, and nothing else
    state_folders: list[str] = Field(default_factory=list)
    # failure kind (agents/failures.py: rate_limit, auth, ...) -> regexes of this CLI's own messages,
    # tried before the patterns shared by every CLI
    failure_patterns: dict[str, list[str]] = Field(default_factory=dict)
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

    @field_validator("trace_format")
    @classmethod
    def _known_format(cls, v: str) -> str:
        from ptbench.agents.traces.formats import TRACE_FORMATS

        known = TRACE_FORMATS.names()
        if v not in known:
            near = difflib.get_close_matches(v, known, n=1)
            hint = f"did you mean '{near[0]}'?" if near else f"known: {', '.join(known)}"
            raise ValueError(
                f"unknown trace format '{v}' ({hint}; a new one registers its parser: docs/guides/add-an-agent-cli.md)"
            )
        return v

    @field_validator("state_folders")
    @classmethod
    def _home_relative(cls, v: list[str]) -> list[str]:
        for folder in v:
            parts = PurePosixPath(folder).parts
            if not parts or folder.startswith(("/", "~")) or ".." in parts or folder in (".", "./"):
                # Excluding HOME itself (or a folder above it) would hide everything from the scan.
                raise ValueError(f"state folder {folder!r}: give a folder inside HOME, relative to it (e.g. .codex)")
        return v

    @field_validator("failure_patterns")
    @classmethod
    def _patterns(cls, v: dict[str, list[str]]) -> dict[str, list[str]]:
        from ptbench.agents.failures import RETRYABLE

        for kind, patterns in v.items():
            if kind not in RETRYABLE:
                raise ValueError(f"failure kind {kind!r} is not one of {', '.join(RETRYABLE)}")
            for pattern in patterns:
                try:
                    re.compile(pattern)
                except re.error as exc:
                    raise ValueError(f"failure_patterns.{kind}: {pattern!r} is not a regex ({exc})") from None
        return v

    @model_validator(mode="after")
    def _pinned(self) -> AgentSpec:
        if self.package is not None and self.pin is None:
            want = "name==version (a PyPI package, with venv)" if self.venv else "name@version (an npm package)"
            raise ValueError(f"package {self.package!r} is not pinned: give {want}")
        return self

    @property
    def pin(self) -> tuple[Literal["npm", "pip"], str] | None:
        """(installer, pinned package): pip into its own venv when `venv` is set, else npm."""
        if self.package is None:
            return None
        if self.venv:
            return ("pip", self.package) if _PIP_PIN.match(self.package) else None
        return ("npm", self.package) if _NPM_PIN.match(self.package) else None

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
