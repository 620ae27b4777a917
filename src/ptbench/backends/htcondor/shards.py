"""A bootcamp rollout's shards on HTCondor: one cluster of N procs described with the campaign's
HTCondor options (with `--tool-replicas`, after the replicas' cluster, see replicas.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ptbench.backends.htcondor import replicas as htcondor_replicas
from ptbench.backends.htcondor import schedd as htcondor_schedd
from ptbench.backends.htcondor.options import parse_options
from ptbench.backends.htcondor.render import render_shards
from ptbench.core.files import atomic_write_json, atomic_write_text


def condor_submit_description(out: Path, shards: int, options: dict[str, Any] | None = None) -> str:
    """One cluster of N procs, proc i running shard i/N (templates/htcondor_shards.sub.j2;
    `options` are the backend's options, e.g. accounting_group, container_image)."""
    return render_shards(out, shards, parse_options(options or {}), name=out.name)


def run_htcondor(
    out: Path, shards: int, options: dict[str, Any] | None = None, *, tool_replicas: int | None = None
) -> dict[str, Any]:
    """Write `condor/shards.sub` and submit it (htcondor2 Schedd, else condor_submit), after the
    `tool_replicas` cluster if asked (its token written first); no waiting: use `ptbench bootcamp
    merge OUT` when the cluster finished (the replicas leave by themselves)."""
    (out / "condor").mkdir(parents=True, exist_ok=True)
    (out / "shards").mkdir(parents=True, exist_ok=True)
    opts = options or {}
    text = condor_submit_description(out, shards, opts)
    if tool_replicas:
        htcondor_replicas.description(
            out, tool_replicas, shards, opts
        )  # both descriptions valid before either is submitted
    path = out / "condor" / "shards.sub"
    atomic_write_text(path, text)
    res: dict[str, Any] = {}
    if tool_replicas:
        res["tool_cluster"] = htcondor_replicas.submit(out, tool_replicas, shards, opts)
    try:
        cluster, via = htcondor_schedd.submit(path, [], opts.get("submit_with", "auto"))
    except BaseException:
        if tool_replicas:
            warning = htcondor_replicas.cancel(out, res["tool_cluster"], tool_replicas)
            if warning:
                print(f"warning: {warning}", file=sys.stderr)
        raise
    atomic_write_json(
        out / "jobs.json",
        {"backend": "htcondor", "cluster": cluster, "procs": shards, "via": via, "description": str(path)},
    )
    return {**res, "cluster": cluster}
