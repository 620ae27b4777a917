"""Fixed test subsets shipped with ptbench (HealthBench Easy's 245 prompt ids, Arena-Hard v2.0's
250 creative-writing uids): the items are taken from the official data file *by id*, in the
shipped order, and a missing id is an error, never a smaller test set."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ptbench.core.errors import UserError

SHIPPED = Path(__file__).parent / "data"


def read_ids(option: list[str] | str | None, shipped: str) -> tuple[list[str], dict[str, Any]]:
    """The ids from a task option (a list, or a file with one id per line), else the shipped file."""
    if isinstance(option, list):
        ids, source = [str(i) for i in option], "task option"
    else:
        path = Path(option).expanduser() if option else SHIPPED / shipped
        if not path.is_file():
            raise UserError(f"id file {path} does not exist (one id per line)")
        ids, source = (
            [line.strip() for line in path.read_text().splitlines() if line.strip()],
            str(path) if option else f"shipped {shipped}",
        )
    if len(set(ids)) != len(ids):
        raise UserError(f"{source}: duplicate ids")
    digest = hashlib.sha256("\n".join(ids).encode()).hexdigest()
    return ids, {"ids_from": source, "ids": len(ids), "ids_sha256": digest}


def select_by_id(rows: list[dict[str, Any]], key: str, ids: list[str], task: str, where: str) -> list[dict[str, Any]]:
    by_id = {str(r.get(key)): r for r in rows}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise UserError(
            f"{task}: {len(missing)} of {len(ids)} ids of the subset are not in {where} (e.g. {missing[0]}); "
            f"point data_path at the official data file, or pass the subset's ids explicitly"
        )
    return [by_id[i] for i in ids]
