"""verl's private API, here and nowhere else (tests/core/test_private_verl.py checks each name in
verl's own source, in the verl venv, so an upgrade that renames one fails there, loudly).

  set_verl_active_tools / verl_active_tools / verl_active_tool_schemas
      AgentData._active_tools / _active_tool_schemas: the tools one episode of verl 0.9.1's
      ToolAgentLoop may call, set in `_handle_pending_state`; verl has no per-episode tool API.

Nothing here imports verl (it lives in its own venv): these functions only touch the object given.
"""

from __future__ import annotations

from typing import Any

ACTIVE_TOOLS = "_active_tools"
ACTIVE_TOOL_SCHEMAS = "_active_tool_schemas"


def set_verl_active_tools(agent_data: Any, tools: dict[str, Any], schemas: list[dict[str, Any]]) -> None:
    """The tools (name -> verl tool) and their schemas this episode may call."""
    setattr(agent_data, ACTIVE_TOOLS, tools)
    setattr(agent_data, ACTIVE_TOOL_SCHEMAS, schemas)


def verl_active_tools(agent_data: Any) -> dict[str, Any]:
    """The tools this episode may call (name -> verl tool), as verl's loop reads them."""
    return dict(getattr(agent_data, ACTIVE_TOOLS))


def verl_active_tool_schemas(agent_data: Any) -> list[dict[str, Any]]:
    """Their schemas, as verl's loop hands them to the chat template."""
    return list(getattr(agent_data, ACTIVE_TOOL_SCHEMAS))
