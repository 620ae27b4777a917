"""`<campaign>/jobs.json`: which scheduler job runs (or ran) each trial.

{"backend": "slurm",
 "submissions": [{"job_id": "123", "submitted_at": ..., "trials": 40, "script": ..., "folder": ...}, ...],
 "trials": {"<trial id>": "123_7", ...}}      # the latest job of every trial

Written atomically under a lock, so two `ptbench submit` runs never lose each other's jobs, and
read by `ptbench status` / `ptbench cancel` from any shell.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from ptbench.core.errors import UserError
from ptbench.core.files import atomic_write_json
from ptbench.core.locks import file_lock


class JobTable(BaseModel):
    backend: str
    submissions: list[dict[str, Any]] = Field(default_factory=list)
    trials: dict[str, str] = Field(default_factory=dict)

    @staticmethod
    def path(campaign_dir: Path) -> Path:
        return Path(campaign_dir) / "jobs.json"

    @classmethod
    def load(cls, campaign_dir: Path, backend: str = "slurm") -> JobTable:
        p = cls.path(campaign_dir)
        try:
            return cls.model_validate_json(p.read_bytes())
        except FileNotFoundError:
            return cls(backend=backend)
        except (ValidationError, ValueError) as exc:
            raise UserError(
                f"{p}: corrupt job table ({str(exc).splitlines()[0][:100]}); move it aside (jobs it lists keep running)"
            ) from None

    @classmethod
    @contextmanager
    def locked(cls, campaign_dir: Path, backend: str) -> Iterator[JobTable]:
        """Read-modify-write under an exclusive lock; written when the block ends without error."""
        with file_lock(Path(campaign_dir) / ".jobs.lock"):
            table = cls.load(campaign_dir, backend)
            if table.backend != backend:
                raise UserError(
                    f"{cls.path(campaign_dir)}: this campaign was submitted with the {table.backend} backend; "
                    f"cancel those jobs and move jobs.json aside before using {backend}"
                )
            yield table
            atomic_write_json(cls.path(campaign_dir), json.loads(table.model_dump_json()))

    def add_submission(self, job_id: str, trial_jobs: dict[str, str], **info: Any) -> None:
        self.submissions.append({"job_id": job_id, "submitted_at": time.time(), "trials": len(trial_jobs), **info})
        self.trials.update(trial_jobs)
