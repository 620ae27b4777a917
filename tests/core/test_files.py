"""core/files: a write either replaces the file whole or leaves the old one and no temporary file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from ptbench.core.files import atomic_write_bytes, atomic_writer


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_write_replaces_the_file_readable_by_others_or_with_the_mode_asked(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_bytes(b"old")
    atomic_write_bytes(path, b"new")
    assert path.read_bytes() == b"new"
    umask = os.umask(0)
    os.umask(umask)
    assert _mode(path) == 0o666 & ~umask  # not mkstemp's 0600: collators and schedulers read it
    atomic_write_bytes(path, b"secret", mode=0o600)
    assert (path.read_bytes(), _mode(path)) == (b"secret", 0o600)
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    path.write_bytes(b"old")
    with pytest.raises(RuntimeError), atomic_writer(path) as fh:
        fh.write(b"half of the new")
        raise RuntimeError("killed mid-write")
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]

    with pytest.raises(TypeError):
        atomic_write_bytes(path, "not bytes")  # type: ignore[arg-type]  # the write itself fails
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]
