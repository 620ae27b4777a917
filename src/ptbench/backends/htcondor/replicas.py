"""A rollout's tool-server replicas on HTCondor: one cluster of N procs next to the shards' cluster.

Same submit path (`htcondor_schedd.submit`: htcondor2 Schedd, else condor_submit) and the same
campaign options (executable, environment, container, accounting group, requirements, site lines)
as the shards (`render.render_tool_servers`). Nobody waits on HTCondor, so nothing here
stops them: each replica is started with `--shards N` and leaves once every shard of the run wrote
its final file (bootcamp/replicas.py `rollout_finished`), or after `IDLE_EXIT_S` without a request.
HTCondor places and restarts them (`max_retries`); a restarted one re-announces itself with a new
start time and the shards' pool takes it as a new generation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ptbench.backends.htcondor import schedd as htcondor_schedd
from ptbench.backends.htcondor.options import parse_options
from ptbench.backends.htcondor.render import render_tool_servers
from ptbench.backends.units import IDLE_EXIT_S
from ptbench.bootcamp import replicas
from ptbench.core.files import atomic_write_json, atomic_write_text


def description(out: Path, n: int, shards: int, options: dict[str, Any] | None = None) -> str:
    return render_tool_servers(out, n, shards, parse_options(options or {}), name=out.name, idle_exit_s=IDLE_EXIT_S)


def render(out: Path, n: int, shards: int, options: dict[str, Any] | None = None) -> Path:
    """Write `OUT/condor/tool-servers.sub` (what `submit` submits) and return its path."""
    path = out / "condor" / "tool-servers.sub"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, description(out, n, shards, options))
    return path


def submit(out: Path, n: int, shards: int, options: dict[str, Any] | None = None) -> int:
    """New run (fresh 0600 token, stale replica files gone), then the replicas' cluster; returns its id."""
    path = render(out, n, shards, options)  # bad options fail here, before the token changes
    replicas.new_run(out)
    (replicas.replica_dir(out)).mkdir(parents=True, exist_ok=True)  # the cluster's log/out/err go there
    cluster, via = htcondor_schedd.submit(path, [], (options or {}).get("submit_with", "auto"))
    atomic_write_json(
        replicas.replica_dir(out) / "jobs.json",
        {
            "backend": "htcondor",
            "cluster": cluster,
            "via": via,
            "description": str(path),
            "jobs": {str(i): f"{cluster}.{i}" for i in range(n)},
        },
    )
    return cluster


def cancel(out: Path, cluster: int, n: int) -> str | None:
    """The shards could not be submitted: tell the replicas (`done`) and remove their cluster."""
    replicas.mark_done(out)
    return htcondor_schedd.remove(
        [f"{cluster}.{i}" for i in range(n)], "ptbench: the rollout's shards were not submitted"
    )
