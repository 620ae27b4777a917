"""Argv units (rollout shards, tool-server replicas) on HTCondor: one cluster per array, proc i
running unit i — the description is rendered from the kind's template (templates/htcondor_shards.sub.j2,
htcondor_tool_servers.sub.j2), whose `arguments` are the units' argv with $(Process) = i, with the
campaign's HTCondor options. Nobody waits on HTCondor: `ptbench bootcamp merge OUT` when the cluster
finished; replicas leave by themselves once every shard of the run wrote its final file
(bootcamp/serving/replicas.py `rollout_finished`), or after `IDLE_EXIT_S` without a request. HTCondor places
and restarts them (`max_retries`); a restarted one re-announces itself and the shards' pool takes it
as a new generation.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ptbench.backends.base import Submitted, UnitArray, UnitState
from ptbench.backends.htcondor import schedd as htcondor_schedd
from ptbench.backends.htcondor.options import HTCondorOptions
from ptbench.backends.htcondor.render import render_shards, render_tool_servers
from ptbench.backends.jobs import JobsFile, Kind, write_jobs
from ptbench.bootcamp.serving.replicas import IDLE_EXIT_S
from ptbench.core.errors import UserError
from ptbench.core.files import atomic_write_text


def description(opts: HTCondorOptions, array: UnitArray) -> str:
    out = Path(array.extra["out"])
    if array.kind == "shards":
        return render_shards(out, len(array.units), opts, name=out.name)
    if array.kind == "tool-servers":
        return render_tool_servers(
            out, len(array.units), int(array.extra["shards"]), opts, name=out.name, idle_exit_s=IDLE_EXIT_S
        )
    raise UserError(f"the htcondor backend has no description for {array.kind} units")  # pragma: no cover


def default_path(array: UnitArray) -> Path:
    name = "shards.sub" if array.kind == "shards" else "tool-servers.sub"
    return Path(array.extra["out"]) / "condor" / name


def render(opts: HTCondorOptions, array: UnitArray, path: Path) -> Path:
    text = description(opts, array)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text)
    return path


def submit(opts: HTCondorOptions, array: UnitArray, max_procs: int | None) -> Submitted:
    """One cluster (its $(Process) numbers the units, so it is never split: more units than the
    schedd takes in one submission is refused with the limit named)."""
    n = len(array.units)
    if max_procs is not None and n > max_procs:
        raise UserError(
            f"{n} {array.kind} units are more than this schedd takes in one submission "
            f"(MAX_JOBS_PER_SUBMISSION = {max_procs}); use fewer (--shards / --tool-replicas)"
        )
    path = render(opts, array, default_path(array))
    array.folder.mkdir(parents=True, exist_ok=True)  # the cluster's log/out/err go there
    cluster, via = htcondor_schedd.submit(path, [], opts.submit_with)
    ids = {u.id: f"{cluster}.{i}" for i, u in enumerate(array.units)}
    write_jobs(array.folder, "htcondor", array.kind, str(cluster), ids, via=via, script=str(path))
    return Submitted(job_ids=[str(cluster)], units=n, noun="cluster", handles=list(ids.values()))


def stop(submitted: Submitted, reason: str) -> None:
    warning = htcondor_schedd.remove(list(submitted.handles or []), reason)
    if warning:
        print(f"warning: {warning}", file=sys.stderr)


def states(folder: Path, kind: Kind) -> dict[str, UnitState]:
    table = JobsFile.load(folder, kind)
    if table is None or not table.units:
        return {}
    clusters = sorted({int(j.split(".")[0]) for j in table.units.values()})
    live = {j: entry.status for j, entry in htcondor_schedd.query(clusters).items()}
    out = {}
    for unit, job in table.units.items():
        raw = live.get(job, "")
        state = raw if raw in ("queued", "running", "held") else ("ended" if raw else "")
        if state:
            out[unit] = UnitState(state, raw)
    return out
