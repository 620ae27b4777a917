"""Versioned files (core.versioned): newer refused with one line, older migrated, corrupt refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from ptbench.core.errors import UserError
from ptbench.core.versioned import NewerSchema, parse_versioned, read_versioned, upgrade_tagged, versioned_dict


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


def test_a_kind_may_start_before_version_1() -> None:
    """jobs.json's shapes from before the version are version 0: migrated, and a v1 file read as is."""
    steps = {0: lambda d: {**d, "name": d.pop("title")}}
    assert parse_versioned(Record, {"title": "a"}, current=3, migrations=steps, where="r", unversioned=0).name == "a"
    assert parse_versioned(Record, {"schema_version": 1, "name": "b"}, current=3, where="r", unversioned=0).name == "b"
    with pytest.raises(UserError, match="schema_version -1 is not a version"):
        parse_versioned(Record, {"schema_version": -1, "name": "b"}, current=3, where="r", unversioned=0)


def test_a_tagged_record_is_checked_and_migrated_by_its_tag() -> None:
    steps = {1: lambda d: {"name": d.pop("title"), **d}}
    old = upgrade_tagged({"schema": "k/1", "title": "a"}, kind="k", current=2, migrations=steps, where="t")
    assert old == {"schema": "k/2", "name": "a"}
    assert upgrade_tagged({"name": "a"}, kind="k", current=2, where="t") == {"schema": "k/2", "name": "a"}
    with pytest.raises(NewerSchema) as exc:
        upgrade_tagged({"schema": "k/3"}, kind="k", current=2, where="t")
    assert "t: schema_version 3 is newer than this ptbench reads (2)" in str(exc.value)
    for tag in ("other/1", "k/x", "k", 7):
        with pytest.raises(UserError, match="is not a k record"):
            upgrade_tagged({"schema": tag}, kind="k", current=2, where="t")


def test_versioned_dict_checks_without_a_model() -> None:
    assert versioned_dict(b'{"a": 1}', current=2, where="d") == {"a": 1, "schema_version": 2}
    with pytest.raises(NewerSchema):
        versioned_dict(b'{"schema_version": 3}', current=2, where="d")
    with pytest.raises(UserError, match="expected a JSON object"):
        versioned_dict(b"[]", current=2, where="d")
