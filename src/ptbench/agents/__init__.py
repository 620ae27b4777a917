"""Agents as data: `agents/<name>/agent.yaml` loaded and launched by one generic launcher."""

from ptbench.agents.spec import AgentSpec, agent_folder, available_agents, load_agent

__all__ = ["AgentSpec", "agent_folder", "available_agents", "load_agent"]
