"""Known secret values never reach a file the harness writes."""

from __future__ import annotations

import os
from pathlib import Path

from ptbench.agents.redact import RedactingPump, Redactor, scrub_tree

KEY = "sk-canary-0123456789abcdef"


def test_redactor_replaces_every_occurrence_longest_first() -> None:
    r = Redactor({"A": KEY, "B": KEY + "-longer", "SHORT": "abc"})
    out = r.text(f"x {KEY} y {KEY}-longer z abc")
    assert KEY not in out and "[REDACTED:A]" in out and "[REDACTED:B]" in out and "abc" in out


def test_pump_redacts_secrets_split_across_writes(tmp_path: Path) -> None:
    log = tmp_path / "native.log"
    pump = RedactingPump(log, Redactor({"K": KEY}), chunk=7)
    data = (f"start {KEY} middle " * 50 + KEY[:10]).encode() + (KEY[10:] + " end, no newline").encode()
    for i in range(0, len(data), 5):  # tiny writes: the key is cut at every possible place
        os.write(pump.write_fd, data[i : i + 5])
    pump.join()
    text = log.read_text()
    assert KEY not in text and text.count("[REDACTED:K]") == 51 and text.endswith("end, no newline")


def test_scrub_tree_rewrites_only_files_with_secrets(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    leaked = tmp_path / "sub" / "config.json"
    leaked.write_text(f'{{"key": "{KEY}"}}')
    os.chmod(leaked, 0o600)
    clean = tmp_path / "clean.txt"
    clean.write_text("nothing here")
    before = clean.stat().st_mtime_ns
    changed = scrub_tree(tmp_path, Redactor({"K": KEY}))
    assert changed == [leaked]
    assert KEY not in leaked.read_text() and (leaked.stat().st_mode & 0o777) == 0o600
    assert clean.stat().st_mtime_ns == before
