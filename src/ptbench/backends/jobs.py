"""`jobs.json`: which scheduler job runs (or ran) each unit of a submission — one typed file, read
and written here only, for every backend and every kind of unit.

    <campaign>/jobs.json                 trials       (kind "trials")
    <rollout OUT>/jobs.json              shards       (kind "shards", units "shard-0003-of-0008")
    <rollout OUT>/tool-servers/jobs.json replicas     (kind "tool-servers", units "0", "1", ...)

{"schema_version": 1, "backend": "slurm", "kind": "trials",
 "submissions": [{"job_id": "123", "submitted_at": ..., "units": {"t1": "123_0", ...}, "script": ...}],
 "units": {"t1": "123_0", ...},          # the latest job of every unit
 "left": ["t9", ...],                    # refused by a scheduler limit: the next `ptbench submit` sends them
 "log": null}                            # HTCondor: the user log every cluster writes to

A job id is a Slurm array task ("123_4"), an HTCondor job ("51.3") or a local pid. Files written
before `schema_version` existed (four shapes) are read and migrated; a newer version is refused with
one line. Written atomically under a lock, so two `ptbench submit` runs never lose each other's jobs.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from ptbench.core.errors import UserError
from ptbench.core.files import atomic_write_json
from ptbench.core.locks import file_lock
from ptbench.core.versioned import NewerSchema, parse_versioned

SCHEMA_VERSION = 1
Kind = Literal["trials", "shards", "tool-servers"]


class Submission(BaseModel):
    job_id: str = Field(description="Slurm array id, HTCondor cluster id, or 'local'")
    submitted_at: float
    units: dict[str, str] = Field(default_factory=dict, description="unit id -> its job in this submission")
    via: str | None = Field(default=None, description="HTCondor: schedd or condor_submit")
    script: str | None = Field(default=None, description="the sbatch script / submit description")
    folder: str | None = None
    max_retries: int | None = Field(default=None, description="HTCondor: runs a job may have before it is failed")

    @property
    def procs(self) -> dict[str, int]:
        """HTCondor: unit id -> proc id in this cluster."""
        return {u: int(j.rsplit(".", 1)[1]) for u, j in self.units.items() if "." in j}


class JobsFile(BaseModel):
    schema_version: int = SCHEMA_VERSION
    backend: str
    kind: Kind = "trials"
    log: str | None = Field(default=None, description="HTCondor: the user log of every cluster")
    submissions: list[Submission] = Field(default_factory=list)
    units: dict[str, str] = Field(default_factory=dict, description="unit id -> its latest job")
    left: list[str] = Field(default_factory=list, description="units a scheduler limit refused; not yet submitted")

    # ---- read / write ------------------------------------------------------------------------
    @staticmethod
    def path_in(folder: Path) -> Path:
        return Path(folder) / "jobs.json"

    @classmethod
    def load(cls, folder: Path, kind: Kind = "trials") -> JobsFile | None:
        """The file in `folder`, migrated to this version (core.versioned); None when there is none."""
        p = cls.path_in(folder)
        try:
            raw = p.read_bytes()
        except FileNotFoundError:
            return None
        try:
            return parse_versioned(
                cls,
                raw,
                current=SCHEMA_VERSION,
                migrations={0: lambda data: _migrate_v0(data, kind)},
                unversioned=0,  # the four shapes written before the version
                where=str(p),
            )
        except NewerSchema as exc:
            raise NewerSchema(f"{exc.args[0].removesuffix(' to read it')} to track these jobs") from None
        except UserError as exc:
            raise UserError(f"{exc.args[0]}; move it aside (jobs it lists keep running)") from None

    @classmethod
    @contextmanager
    def locked(cls, folder: Path, backend: str, kind: Kind = "trials", *, fresh: bool = False) -> Iterator[JobsFile]:
        """Read-modify-write under an exclusive lock; written when the block ends without error.
        `fresh` starts a new table (a new rollout run) instead of adding to the one there."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        with file_lock(folder / ".jobs.lock"):
            table = None if fresh else cls.load(folder, kind)
            if table is not None and table.backend != backend:
                if kind == "trials":
                    raise UserError(
                        f"{cls.path_in(folder)}: this campaign was submitted with the {table.backend} backend; "
                        f"cancel those jobs and move jobs.json aside before using {backend}"
                    )
                table = None  # a rollout rerun on another backend: its shards start over
            table = table or cls(backend=backend, kind=kind)
            yield table
            atomic_write_json(cls.path_in(folder), json.loads(table.model_dump_json()))

    def add_submission(self, job_id: str, unit_jobs: dict[str, str], **info: Any) -> Submission:
        sub = Submission(job_id=str(job_id), submitted_at=time.time(), units=dict(unit_jobs), **info)
        self.submissions.append(sub)
        self.units.update(sub.units)
        self.left = [u for u in self.left if u not in sub.units]
        return sub

    def job_ids(self) -> list[str]:
        """Every unit's latest job, in unit order."""
        return list(self.units.values())


def write_jobs(where: Path, backend: str, kind: Kind, job_id: str, unit_jobs: dict[str, str], **info: Any) -> JobsFile:
    """A new table with one submission (a rollout's shards or replicas: each run starts afresh)."""
    with JobsFile.locked(where, backend, kind, fresh=True) as table:
        table.add_submission(job_id, unit_jobs, **info)
    return table


def load_units(folder: Path, kind: Kind) -> JobsFile | None:
    return JobsFile.load(folder, kind)


def _migrate_v0(data: dict[str, Any], kind: Kind) -> dict[str, Any]:
    """The four shapes written before `schema_version`: Slurm and HTCondor trial tables, a rollout's
    {backend, jobs} (local/Slurm shards, replicas) and HTCondor shards {backend, cluster, procs}."""
    backend = data.get("backend")
    out: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "backend": backend, "kind": kind}
    subs: list[dict[str, Any]] = []
    if "trials" in data and isinstance(data.get("submissions"), list):  # trial tables
        units = {str(k): str(v) for k, v in data["trials"].items()}
        out["log"] = data.get("log")
        for s in data["submissions"]:
            if "cluster" in s:  # htcondor
                cluster = s["cluster"]
                subs.append(
                    {
                        "job_id": str(cluster),
                        "submitted_at": s.get("submitted_at", 0.0),
                        "units": {t: f"{cluster}.{p}" for t, p in s.get("procs", {}).items()},
                        "via": s.get("via"),
                        "script": s.get("description"),
                        "max_retries": s.get("max_retries"),
                    }
                )
            else:  # slurm
                array = str(s["job_id"])
                subs.append(
                    {
                        "job_id": array,
                        "submitted_at": s.get("submitted_at", 0.0),
                        "units": {t: j for t, j in units.items() if j.split("_")[0] == array},
                        "script": s.get("script"),
                        "folder": s.get("folder"),
                    }
                )
        out["units"] = units
    elif "jobs" in data:  # a rollout's shards or replicas
        units = {str(k): str(v) for k, v in data["jobs"].items()}
        job_id = str(data.get("cluster", "local" if backend == "local" else ""))
        if not job_id:
            job_id = next(iter(units.values()), "").split("_")[0]
        subs.append(
            {
                "job_id": job_id,
                "submitted_at": 0.0,
                "units": units,
                "via": data.get("via"),
                "script": data.get("description"),
            }
        )
        out["units"] = units
    elif "cluster" in data:  # htcondor shards
        from ptbench.bootcamp.data.datagen import Shard

        n, cluster = int(data.get("procs", 0)), data["cluster"]
        units = {Shard(i, n).tag: f"{cluster}.{i}" for i in range(n)}
        subs.append(
            {
                "job_id": str(cluster),
                "submitted_at": 0.0,
                "units": units,
                "via": data.get("via"),
                "script": data.get("description"),
            }
        )
        out["units"] = units
    out["submissions"] = subs
    return out
