"""Versioned files (core.versioned): newer refused with one line, older migrated, corrupt refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from ptbench.core.errors import UserError
from ptbench.core.versioned import NewerSchema, parse_versioned, read_versioned


class Record(BaseModel):
    schema_version: int = 3
    name: str
    tags: list[str] = []


MIGRATIONS = {
    1: lambda d: {**d, "name": d.pop("title")},  # v1 called it `title`
    2: lambda d: {**d, "tags": [d.pop("tag")] if d.get("tag") else []},  # v2 had one `tag`
}


def test_an_old_file_is_migrated_step_by_step(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"title": "a", "tag": "x"}))  # no schema_version: version 1
    rec = read_versioned(Record, path, current=3, migrations=MIGRATIONS)
    assert rec == Record(schema_version=3, name="a", tags=["x"])


def test_a_newer_file_is_refused_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"schema_version": 4, "name": "a"}))
    with pytest.raises(NewerSchema) as exc:
        read_versioned(Record, path, current=3, migrations=MIGRATIONS)
    msg = str(exc.value)
    assert "\n" not in msg and str(path) in msg and "schema_version 4" in msg and "upgrade ptbench" in msg


@pytest.mark.parametrize(
    ("raw", "needle"),
    [("{", "not valid JSON"), ("[1]", "expected a JSON object"), ('{"schema_version": "x"}', "schema_version")],
)
def test_corrupt_files_are_refused(raw: str, needle: str) -> None:
    with pytest.raises(UserError) as exc:
        parse_versioned(Record, raw, current=3, where="r.json")
    assert needle in str(exc.value) and "\n" not in str(exc.value)


def test_a_current_file_that_does_not_validate_names_the_field() -> None:
    with pytest.raises(UserError) as exc:
        parse_versioned(Record, {"schema_version": 3, "name": 5}, current=3, where="r.json")
    assert "field name" in str(exc.value)
