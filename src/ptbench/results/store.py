"""Writing a result record: the invariants every `result.json` keeps, whoever writes it.

Atomic (a reader never sees half a record), never overwritten (a recorded result stays: the
second writer gets False), and redacted of every secret value the writer knows of plus every
secret-looking variable of its environment.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ptbench.core.files import atomic_write_text
from ptbench.core.secrets import redact_text, secret_env_values
from ptbench.results.schema import ResultRecord


def write_record(
    path: str | os.PathLike[str], record: ResultRecord, *, secrets: Mapping[str, str] | None = None
) -> bool:
    path = Path(path)
    if path.exists():
        return False
    text = redact_text(record.model_dump_json(indent=2), {**secret_env_values(), **(secrets or {})})
    ResultRecord.model_validate_json(text)  # redaction must leave a valid record
    atomic_write_text(path, text + "\n")
    return True
