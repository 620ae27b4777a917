"""`sandbox: auto`: bwrap where it can start a sandbox, else a setup error that names `sandbox: none`."""

from __future__ import annotations

import shutil

import pytest

from ptbench.core.errors import UserError
from ptbench.sandbox.auto import bwrap_usable, resolve_sandbox
from tests.support import require


def test_auto_is_bwrap_where_bwrap_works() -> None:
    require(shutil.which("bwrap") is not None, "bubblewrap not installed (apt-get install bubblewrap)")
    bwrap_usable.cache_clear()
    assert resolve_sandbox("auto") == "bwrap"
    assert resolve_sandbox("none") == "none"  # asked for explicitly: kept


def test_auto_without_bwrap_fails_closed(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on PATH
    bwrap_usable.cache_clear()
    try:
        with pytest.raises(UserError) as err:
            resolve_sandbox("auto")
        assert "sandbox: none" in str(err.value) and "bubblewrap" in str(err.value)
    finally:
        bwrap_usable.cache_clear()
