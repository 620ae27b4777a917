"""The versioned files the harness reads, through core.versioned: result.json (the collator),
state.json (the runner), agent/session.json (the solve stage). A newer one is refused with one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ptbench.core.errors import UserError
from ptbench.results.collate import load_records
from ptbench.results.schema import SCHEMA_VERSION
from ptbench.trial import STATE_SCHEMA, TrialDir
from tests.results.test_collate import record


def test_the_collator_reports_a_newer_result_in_one_line_and_reads_the_rest(tmp_path: Path) -> None:
    for i, version in enumerate((None, SCHEMA_VERSION, SCHEMA_VERSION + 1)):
        rec = record("ref", "gsm8k", i, 0.5)
        if version is not None:
            rec["schema_version"] = version
        (tmp_path / rec["trial_id"]).mkdir()
        (tmp_path / rec["trial_id"] / "result.json").write_text(json.dumps(rec))
    records, problems = load_records(tmp_path)
    assert sorted(r.seed for r in records) == [0, 1] and all(r.schema_version == SCHEMA_VERSION for r in records)
    (problem,) = problems
    assert "result.json: schema_version 2 is newer than this ptbench reads (1)" in problem and "\n" not in problem


def test_a_newer_state_is_refused_and_an_unversioned_one_read(tmp_path: Path) -> None:
    trial = TrialDir(tmp_path)
    trial.state_json.write_text(json.dumps({"solve_seconds_used": 12.5}))
    assert trial.load_state().solve_seconds_used == 12.5
    trial.state_json.write_text(json.dumps({"schema_version": STATE_SCHEMA + 1, "solve_seconds_used": 1}))
    with pytest.raises(UserError) as exc:
        trial.load_state()
    msg = str(exc.value)
    assert msg.startswith(str(trial.state_json)) and "newer than this ptbench reads" in msg and "\n" not in msg
    trial.state_json.write_text("{")
    with pytest.raises(UserError, match="corrupt state file .*move it aside"):
        trial.load_state()
