"""Every use of a dependency's private API, one function each, here and nowhere else.

A private name can change in any release. Each function below says what it needs and why no public
API does it; tests/core/test_private_api.py exercises each against the installed dependency, so an
upgrade that moves one fails there, loudly, instead of somewhere deep in a trial. Dependencies are
imported inside the functions: this module is in the bottom layer and must stay cheap to import.

  aiohttp          bound_port                     TCPSite._server (the port chosen for port=0)
  multiprocessing  stop_multiprocessing_helpers   forkserver._forkserver._stop, resource_tracker._resource_tracker._stop
  submitit         submitit_sbatch_script         submitit.slurm.slurm._make_sbatch_string
  submitit         SUBMITIT_SUBMIT_MODULE         python -m submitit.core._submit (what submitit's jobs run)
  verl             set_verl_active_tools          AgentData._active_tools / _active_tool_schemas
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SUBMITIT_SUBMIT_MODULE = "submitit.core._submit"


def bound_port(site: Any) -> int:
    """The TCP port an aiohttp `web.TCPSite` listens on (started with port=0: the kernel chose it).
    aiohttp has no public getter for a site's sockets."""
    server = site._server
    if server is None or not server.sockets:
        raise RuntimeError("aiohttp site is not started (no listening socket)")
    return int(server.sockets[0].getsockname()[1])


def stop_multiprocessing_helpers() -> None:
    """Stop the forkserver and resource tracker this process started, so nothing a process pool
    started outlives it (both restart on demand). The stdlib stops them only at interpreter exit."""
    from multiprocessing import forkserver, resource_tracker

    for holder, attr in ((forkserver, "_forkserver"), (resource_tracker, "_resource_tracker")):
        helper = getattr(holder, attr)
        helper._stop()


def submitit_sbatch_script(*, command: str, folder: str | Path, map_count: int | None, **params: Any) -> str:
    """The sbatch script text submitit would submit (submitit has no public function for it), so
    `ptbench render` shows exactly what `submit` hands to sbatch."""
    from submitit.slurm.slurm import _make_sbatch_string

    return str(_make_sbatch_string(command=command, folder=folder, map_count=map_count, **params))


def set_verl_active_tools(agent_data: Any, tools: dict[str, Any], schemas: list[dict[str, Any]]) -> None:
    """The tools one episode of verl's ToolAgentLoop may call (verl 0.9.1 reads them from these two
    private attributes of its AgentData, set in `_handle_pending_state`; it has no per-episode tool API)."""
    agent_data._active_tools = tools
    agent_data._active_tool_schemas = schemas
