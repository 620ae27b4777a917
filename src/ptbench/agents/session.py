"""`agent/session.json`: the CLI's resume record across runs of one trial's solve stage (versioned).

The solve stage reads it before each run (continue the CLI's session, count continuations) and the
record stage reads `cli_version` from it. Written atomically by the runner only.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from ptbench.core.files import atomic_write_json
from ptbench.core.versioned import read_versioned

SESSION_SCHEMA = 1


class AgentSession(BaseModel):
    schema_version: int = SESSION_SCHEMA
    session_id: str | None = None  # the CLI's own session, continued by continue_command
    continuations: int = 0  # continuations granted so far (the campaign's max_continuations caps them)
    runs: int = 0  # runs of the CLI recorded here
    cli_version: str | None = None
    trace_format: str | None = None


def session_path(agent_dir: Path) -> Path:
    return agent_dir / "session.json"


def load_session(agent_dir: Path) -> AgentSession:
    """The record so far; a fresh one when there is none. A newer schema is refused (UserError)."""
    try:
        return read_versioned(AgentSession, session_path(agent_dir), current=SESSION_SCHEMA)
    except FileNotFoundError:
        return AgentSession()


def save_session(agent_dir: Path, session: AgentSession) -> None:
    atomic_write_json(session_path(agent_dir), session)
