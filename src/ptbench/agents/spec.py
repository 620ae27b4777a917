"""`agents/<name>/agent.yaml`: an agent scaffold described as data, loaded by one launcher."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import Field

from ptbench.errors import UserError
from ptbench.spec.campaign import Strict


class AgentSpec(Strict):
    name: str
    description: str = ""
    # argv, each item a Jinja template (context: see launcher.template_context)
    command: list[str] = Field(min_length=1)
    # argv for continuing an earlier session, when the CLI supports it
    continue_command: list[str] | None = None
    env: dict[str, str] = Field(default_factory=dict, description="extra environment (templated)")
    # provider key variables the agent needs; it gets these and no other secret
    keys: list[str] = Field(default_factory=list)
    optional_keys: list[str] = Field(default_factory=list)
    # files copied into the trial's private HOME (mode 0600), e.g. subscription logins
    auth_files: dict[str, str] = Field(default_factory=dict)
    # how the CLI is installed and which version is pinned (none for built-in agents)
    install: str | None = None
    version: str | None = None
    executable: str | None = None
    # which parser turns the native log into agent/trajectory.json
    trace_format: str = "text"
    # whether the agent gets the full benchmark prompt (LLM agents) or none (scripted agents)
    uses_prompt: bool = False
    options: dict[str, Any] = Field(default_factory=dict, description="defaults for campaign agent options")


def agents_dirs() -> list[Path]:
    """Where agent folders are looked up: $PTBENCH_AGENTS_PATH (colon-separated), then the repo's agents/."""
    dirs = [Path(p) for p in os.environ.get("PTBENCH_AGENTS_PATH", "").split(":") if p]
    repo_agents = Path(__file__).resolve().parents[3] / "agents"
    packaged = Path(__file__).resolve().parent / "builtin"
    return [*dirs, repo_agents, packaged]


def available_agents() -> list[str]:
    names: set[str] = set()
    for d in agents_dirs():
        if d.is_dir():
            names.update(p.parent.name for p in d.glob("*/agent.yaml"))
    return sorted(names)


def agent_folder(name: str) -> Path:
    for d in agents_dirs():
        if (d / name / "agent.yaml").is_file():
            return d / name
    raise UserError(f"unknown agent '{name}' (known: {', '.join(available_agents())}; add agents/{name}/agent.yaml)")


@lru_cache(maxsize=None)
def load_agent(name: str) -> AgentSpec:
    from ptbench.spec.load import load_model_file

    spec, _ = load_model_file(agent_folder(name) / "agent.yaml", AgentSpec)
    if spec.name != name:
        raise UserError(f"{agent_folder(name) / 'agent.yaml'}: name '{spec.name}' differs from its folder '{name}' (make them equal)")
    return spec
