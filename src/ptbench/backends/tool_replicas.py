"""A rollout's tool-server replicas on the backend that runs its shards, for as long as the rollout runs.

`tool_replicas(out, n, backend, options, minutes)` is a context manager: it starts a new replica run
(fresh token, see bootcamp/replicas.py), submits replica i as `ptbench bootcamp serve-tools --dir
OUT --replica i` — `local`: subprocesses; `slurm`: one job array through `SlurmBackend`, with the
same `backend.options` as trials and shards — and on the way out (finished, failed or interrupted)
writes `tool-servers/done`, which every replica obeys, then cancels what is left (terminate/kill,
or one `scancel`) and waits until none runs. HTCondor, where nobody waits: htcondor_replicas.py. The scheduler places and restarts replicas; nothing
here manages them beyond that.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil

from ptbench.backends import htcondor_schedd, slurm_cmd
from ptbench.backends.slurm import SlurmBackend
from ptbench.bootcamp import replicas
from ptbench.core.errors import UserError
from ptbench.core.files import atomic_write_json
from ptbench.status import TrialStatus

_PR_SET_PDEATHSIG = 1
IDLE_EXIT_S = 3600.0
"""A replica nobody called for this long leaves by itself (its rollout died without cancelling it)."""


def replica_command(out: Path, index: int, host: str = "127.0.0.1") -> list[str]:
    return [
        sys.executable,
        "-m",
        "ptbench",
        "bootcamp",
        "serve-tools",
        "--dir",
        str(out),
        "--replica",
        str(index),
        "--host",
        host,
        "--idle-exit",
        f"{IDLE_EXIT_S:g}",
    ]


def _replica_job(out: str, index: int) -> None:
    """What a Slurm array task runs (pickled by submitit): replica `index`, in process, on every interface."""
    from ptbench.bootcamp.toolserver import serve

    serve(out, host="0.0.0.0", replica=index, idle_exit_s=IDLE_EXIT_S)


def slurm_parameters(
    out: Path, n: int, options: dict[str, Any] | None, minutes: int
) -> tuple[SlurmBackend, dict[str, Any]]:
    backend = SlurmBackend(**(options or {}))
    what_runs = f"# array task i runs `ptbench bootcamp serve-tools --dir {out} --replica i` (tool server for the rollout's shards)"
    params = backend.array_parameters(
        name=f"ptbench-tools-{out.name}", minutes=minutes, parallelism=n, gres=None, what_runs=what_runs
    )
    return backend, params


def render_slurm(out: Path, n: int, options: dict[str, Any] | None = None, *, minutes: int = 60) -> Path:
    """The sbatch script `tool_replicas` would submit for the replicas, without submitting."""
    backend, params = slurm_parameters(out, n, options, minutes)
    path = out / "submit" / "tool-servers.sh"
    backend.render_array(params, replicas.replica_dir(out) / "slurm", n, path)
    return path


@contextmanager
def tool_replicas(
    out: Path, n: int, backend: str, options: dict[str, Any] | None = None, *, minutes: int = 60
) -> Iterator[dict[str, str]]:
    """Run `n` replicas while the block runs; yields replica index -> pid or Slurm job id."""
    if backend not in ("local", "slurm"):
        raise UserError(
            f"--tool-replicas: the {backend} backend has no waiting rollout to stop replicas; use local or slurm here "
            "(HTCondor: backends/htcondor_replicas.py)"
        )
    replicas.new_run(out)
    if backend == "local":
        procs = _start_local(out, n)
        jobs = {str(i): str(p.pid) for i, p in enumerate(procs)}
    else:
        _, params = slurm_parameters(out, n, options, minutes)
        submitted = SlurmBackend(**(options or {})).submit_array(
            replicas.replica_dir(out) / "slurm", _replica_job, [[str(out)] * n, list(range(n))], params
        )
        jobs = {str(i): j.job_id for i, j in enumerate(submitted)}
    atomic_write_json(replicas.replica_dir(out) / "jobs.json", {"backend": backend, "jobs": jobs})
    try:
        yield jobs
    finally:
        replicas.mark_done(out)
        if backend == "local":
            _stop_local(procs)
        else:
            _stop_slurm(list(jobs.values()))


def _die_with_parent() -> None:
    """In the replica, before exec: SIGTERM when the rollout process dies, even SIGKILLed (Linux)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover (not Linux): the idle exit still ends it
        pass


def _start_local(out: Path, n: int) -> list[subprocess.Popen[bytes]]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    procs = []
    for i in range(n):
        with open(replicas.replica_dir(out) / f"replica-{i}.log", "ab") as log:
            procs.append(
                subprocess.Popen(
                    replica_command(out, i),
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=env,
                    start_new_session=True,
                    preexec_fn=_die_with_parent,
                )
            )
    return procs


def _stop_local(procs: list[subprocess.Popen[bytes]], grace_s: float = 5.0) -> None:
    """The replicas saw `done`; give them `grace_s` to leave, then SIGTERM (with SIGCONT, for a
    stopped one, as Slurm does), then SIGKILL their whole session."""
    deadline = time.monotonic() + grace_s
    for sigs in ((), (signal.SIGTERM, signal.SIGCONT), (signal.SIGKILL,)):
        for p in procs:
            for sig in sigs:
                if p.poll() is None:
                    try:
                        os.killpg(p.pid, sig)  # the replica and anything it started (heavy-tool workers)
                    except ProcessLookupError:
                        pass
        while any(p.poll() is None for p in procs) and time.monotonic() < deadline:
            time.sleep(0.1)
        deadline = time.monotonic() + 5.0
    for p in procs:
        p.wait()


def _stop_slurm(job_ids: list[str], wait_s: float = 120.0) -> None:
    """One scancel for the tasks still queued or running, then wait until Slurm says none runs."""
    array = sorted({j.split("_")[0] for j in job_ids})
    deadline = time.monotonic() + wait_s
    cancelled = False
    while time.monotonic() < deadline:
        try:
            live = [j for j, info in slurm_cmd.squeue(array).items() if info.state not in slurm_cmd.ENDED]
        except slurm_cmd.SlurmUnavailable as exc:
            print(
                f"warning: cannot tell whether the tool-server replicas ended ({exc}); check `squeue -j {','.join(array)}`",
                file=sys.stderr,
            )
            return
        if not live:
            return
        if not cancelled and time.monotonic() > deadline - wait_s + 5:  # they had 5 s to obey `done`
            slurm_cmd.scancel(array)
            cancelled = True
        time.sleep(1.0)
    print(
        f"warning: tool-server replicas {', '.join(array)} still listed by squeue after {wait_s:g} s", file=sys.stderr
    )


def replica_status_rows(out: Path) -> list[TrialStatus]:
    """One `ptbench status` row per tool-server replica of the rollout's latest run (none without one)."""
    listing = replicas.replica_dir(out) / "jobs.json"
    if not listing.exists():
        return []
    jobs = json.loads(listing.read_text())
    announced = {}
    for path in replicas.replica_dir(out).glob("replica-*.json"):
        try:
            info = json.loads(path.read_text())
            announced[str(info["replica"])] = info
        except (FileNotFoundError, ValueError, KeyError):
            continue
    live: dict[str, str] = {}
    if jobs.get("backend") == "slurm":
        try:
            live = {
                j: info.state
                for j, info in slurm_cmd.squeue(sorted({str(j).split("_")[0] for j in jobs["jobs"].values()})).items()
            }
        except slurm_cmd.SlurmUnavailable:
            pass
    elif jobs.get("backend") == "htcondor":
        live = {j: entry.status for j, entry in htcondor_schedd.query([int(jobs["cluster"])]).items()}
    rows = []
    for index, job in sorted(jobs["jobs"].items(), key=lambda kv: int(kv[0])):
        if jobs.get("backend") == "htcondor":
            raw = live.get(str(job), "")
            state = raw if raw in ("queued", "running", "held") else ("ended" if raw else "unknown")
        elif jobs.get("backend") == "slurm":
            raw = live.get(str(job), "")
            state = slurm_cmd.trial_state(raw) or ("ended" if raw else "unknown")
        else:
            state = "running" if psutil.pid_exists(int(job)) and index in announced else "ended"
        url = announced.get(index, {}).get("url", "")
        rows.append(
            TrialStatus(
                trial_id=f"tool-replica-{index}",
                state=state,
                metric=url,
                detail=live.get(str(job), ""),
                job_id=str(job),
                stage="tools",
            )
        )
    return rows
