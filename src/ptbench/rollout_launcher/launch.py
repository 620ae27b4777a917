"""The bootcamp rollout launcher: what `ptbench bootcamp rollout` does, on any backend, through the
`Backend` protocol only (no backend names here).

A rollout is two arrays of argv units (rollout_launcher/units.py): its shards, `rollout-shard OUT --shard i/N`,
and with `--tool-replicas N` its tool-server replicas, `serve-tools --dir OUT --replica i`. Both are
checked (`prepare_units`) before either is submitted; the replicas start first with a fresh token
(bootcamp/serving/replicas.py), then the shards. A backend that waits (local, Slurm) waits for the shards,
then writes `tool-servers/done` and stops the replicas (finished, failed or interrupted); on one that
nobody waits on (HTCondor) the replicas leave by themselves once every shard wrote its final file,
and are removed at once if the shards could not be submitted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ptbench.backends.base import Backend, Submitted, Unit, UnitArray
from ptbench.bootcamp.data.datagen import Shard
from ptbench.bootcamp.serving import replicas
from ptbench.core.errors import UserError
from ptbench.rollout_launcher.units import count_lines, replica_command, shard_command


def shard_array(out: Path, shards: int, minutes: int) -> UnitArray:
    units = [
        Unit(Shard(i, shards).tag, shard_command(out, Shard(i, shards)), out / "shards" / f"{Shard(i, shards).tag}.log")
        for i in range(shards)
    ]
    return UnitArray(
        kind="shards",
        name=f"ptbench-bootcamp-{out.name}",
        folder=out,
        units=units,
        minutes=minutes,
        what_runs=f"# array task i runs `ptbench bootcamp rollout-shard {out} --shard i/{shards}`",
        extra={"out": str(out), "render_as": "slurm.sh"},
    )


def replica_array(out: Path, n: int, shards: int, minutes: int, host: str) -> UnitArray:
    folder = replicas.replica_dir(out)
    return UnitArray(
        kind="tool-servers",
        name=f"ptbench-tools-{out.name}",
        folder=folder,
        units=[Unit(str(i), replica_command(out, i, host), folder / f"replica-{i}.log") for i in range(n)],
        minutes=minutes,
        what_runs=(
            f"# array task i runs `ptbench bootcamp serve-tools --dir {out} --replica i`"
            " (tool server for the rollout's shards)"
        ),
        extra={"out": str(out), "shards": shards, "render_as": "tool-servers.sh"},
    )


@dataclass
class Launched:
    """What `launch` did: the files it rendered, or the submissions and (when it waited) each shard's exit code."""

    rendered: list[Path] = field(default_factory=list)
    shards: Submitted | None = None
    replicas: Submitted | None = None
    codes: dict[str, int] | None = None  # None: nobody waited (HTCondor, --no-wait)


def launch(
    out: Path,
    backend: Backend,
    shards: int,
    *,
    tool_replicas: int | None = None,
    minutes: int = 60,
    wait: bool = True,
    render: bool = False,
    progress: Callable[[int], None] | None = None,
) -> Launched:
    """Render, or submit (and on a backend that waits, wait for) a rollout's shards and replicas."""
    # A replica run on a scheduler's node listens on every interface; here, on loopback only.
    host = "127.0.0.1" if backend.runs_here else "0.0.0.0"
    arrays = [shard_array(out, shards, minutes)]
    if tool_replicas:
        arrays.insert(0, replica_array(out, tool_replicas, shards, minutes, host))
    if render:
        return Launched(rendered=[backend.render_units(a) for a in arrays])
    backend.prepare_units(arrays)  # bad options or descriptions: one line before anything is submitted
    (out / "shards").mkdir(parents=True, exist_ok=True)
    launched = Launched()
    replica_units = arrays[0] if tool_replicas else None
    if replica_units is not None:
        replicas.new_run(out)  # a fresh token (0600), stale replica files gone
        launched.replicas = backend.submit_units(replica_units)
        stop_replicas = True
    try:
        launched.shards = backend.submit_units(arrays[-1])
        if not backend.waits or not wait:
            stop_replicas = False  # they leave by themselves when every shard finished
            return launched
        offsets: dict[Path, tuple[int, int]] = {}

        def poll() -> None:
            if progress is not None:
                progress(count_lines(sorted((out / "shards").glob("shard-*.jsonl")), offsets))

        launched.codes = backend.wait_units(launched.shards, poll)
        return launched
    finally:
        if replica_units is not None and launched.replicas is not None and stop_replicas:
            replicas.mark_done(out)  # every replica obeys `done`
            backend.stop_units(replica_units, launched.replicas)


def check_replicas(tools_remote: bool, name: str, tool_server: str | None, wait: bool, waits: bool) -> None:
    """--tool-replicas: refuse what cannot work before anything is written or submitted."""
    if not tools_remote:
        raise UserError(
            f"--tool-replicas: no tool of {name} has `remote: true`; mark the tools that must run on the replicas"
        )
    if tool_server:
        raise UserError(
            "--tool-replicas and --tool-server: pass one (replicas are found in OUT/tool-servers, a server by its URL)"
        )
    if not wait and waits:  # where nobody waits, the replicas end by themselves when every shard finished
        raise UserError(
            "--tool-replicas with --no-wait: the replicas stop when the rollout ends, "
            "so the rollout must wait for its shards"
        )


def describe(launched: Launched, out: Path, shards: int, tool_replicas: int | None) -> list[str]:
    """The lines the CLI prints after submitting without waiting."""
    lines = []
    if launched.replicas is not None:
        lines.append(
            f"submitted {launched.replicas.describe()} ({tool_replicas} tool-server replicas; "
            "they leave when every shard finished)"
        )
    if launched.shards is not None:
        lines.append(
            f"submitted {launched.shards.describe()} ({shards} shards); when done: ptbench bootcamp merge {out}"
        )
    return lines


def failed_shards(codes: dict[str, int], out: Path) -> None:
    failed = {tag: code for tag, code in codes.items() if code != 0}
    if failed:
        first = next(iter(failed))
        raise UserError(
            f"{len(failed)} shard(s) failed ({first}: exit {failed[first]}; log in {out / 'shards'}); "
            "rerun the same command to resume"
        )
