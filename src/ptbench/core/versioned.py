"""Versioned files (`schema_version`) read by one reader per kind: a newer version is refused with one
line, an older one is migrated step by step to the current shape before it is validated.

A kind declares its current version and, for each older version N, a function that turns a version-N
dict into a version-N+1 dict. A file without `schema_version` is version 1 (every kind started there),
unless its kind says otherwise (`unversioned`: jobs.json had four shapes before it was versioned).
A record that names its kind and version in one tag (`"schema": "ptbench.bootcamp.trace/1"`) is
checked the same way by `upgrade_tagged`.

Versioned here: result.json, state.json, trial.json, jobs.json, agent/session.json,
agent/trajectory.json (integrity's reader) and the bootcamp's episode traces.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ptbench.core.errors import UserError

M = TypeVar("M", bound=BaseModel)
Migration = Callable[[dict[str, Any]], dict[str, Any]]


class NewerSchema(UserError):
    """The file was written by a newer ptbench than this one."""


def upgrade(
    data: dict[str, Any],
    *,
    current: int,
    migrations: Mapping[int, Migration] | None = None,
    where: str,
    unversioned: int = 1,
) -> dict[str, Any]:
    """`data` at version `current`: refused if newer, migrated if older (each step from `migrations`).
    A dict without `schema_version` is at version `unversioned`."""
    version = data.get("schema_version", unversioned)
    if not isinstance(version, int) or isinstance(version, bool) or version < unversioned:
        raise UserError(f"{where}: schema_version {version!r} is not a version of this file (the file is corrupt)")
    if version > current:
        raise NewerSchema(
            f"{where}: schema_version {version} is newer than this ptbench reads ({current}); "
            "upgrade ptbench (pip install -U ptbench) to read it"
        )
    steps = migrations or {}
    while version < current:
        step = steps.get(version)
        data = step(dict(data)) if step is not None else dict(data)
        version += 1
        data["schema_version"] = version
    return data


def upgrade_tagged(
    data: Mapping[str, Any],
    *,
    kind: str,
    current: int,
    migrations: Mapping[int, Migration] | None = None,
    where: str,
    key: str = "schema",
) -> dict[str, Any]:
    """`data` whose `key` is the tag "KIND/N" (absent: the current tag), at version `current` as
    `upgrade` does it; the result carries the current tag. A tag of another kind is refused."""
    tag = data.get(key, f"{kind}/{current}")
    name, _, number = str(tag).rpartition("/")
    if name != kind or not number.isdigit():
        raise UserError(f"{where}: {key} {tag!r} is not a {kind} record (expected {kind}/{current})")
    out = upgrade(
        {**data, "schema_version": int(number)}, current=current, migrations=migrations, where=where, unversioned=1
    )
    del out["schema_version"]
    out[key] = f"{kind}/{current}"
    return out


def versioned_dict(
    raw: bytes | str,
    *,
    current: int,
    migrations: Mapping[int, Migration] | None = None,
    where: str,
    unversioned: int = 1,
) -> dict[str, Any]:
    """JSON text that must be an object, at version `current` (for a reader that wants the dict)."""
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise UserError(f"{where}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise UserError(f"{where}: expected a JSON object, found {type(data).__name__}")
    return upgrade(data, current=current, migrations=migrations, where=where, unversioned=unversioned)


def parse_versioned(
    model: type[M],
    raw: bytes | str | Mapping[str, Any],
    *,
    current: int,
    migrations: Mapping[int, Migration] | None = None,
    where: str,
    unversioned: int = 1,
) -> M:
    """Validate `raw` (JSON text or a dict) as `model` after the version check and migrations.

    Raises UserError (one line) for a newer version, a file that is not a JSON object, or one that
    does not validate.
    """
    if not isinstance(raw, Mapping):  # the fast path (collating 10,000 records): a current file, parsed once
        try:
            obj = model.model_validate_json(raw)
            if "schema_version" in obj.model_fields_set and getattr(obj, "schema_version", None) == current:
                return obj
        except ValidationError:
            pass
    if isinstance(raw, Mapping):
        data = upgrade(dict(raw), current=current, migrations=migrations, where=where, unversioned=unversioned)
    else:
        data = versioned_dict(raw, current=current, migrations=migrations, where=where, unversioned=unversioned)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
        raise UserError(f"{where}: field {loc}: {err['msg']} (the file is corrupt)") from None


def read_versioned(
    model: type[M],
    path: str | os.PathLike[str],
    *,
    current: int,
    migrations: Mapping[int, Migration] | None = None,
    unversioned: int = 1,
) -> M:
    """`parse_versioned` of a file; FileNotFoundError passes through (absent is the caller's case)."""
    raw = Path(path).read_bytes()
    return parse_versioned(model, raw, current=current, migrations=migrations, where=str(path), unversioned=unversioned)
