"""The versioned files the harness reads, through core.versioned: result.json (the collator),
state.json (the runner), agent/session.json (the solve stage). A newer one is refused with one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ptbench.core.errors import UserError
from ptbench.core.versioned import NewerSchema
from ptbench.results.collate import load_records
from ptbench.results.schema import SCHEMA_VERSION, ResultRecord
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


def _trial_spec(trial: TrialDir) -> dict:
    from ptbench.trial import TrialSpec

    spec = TrialSpec.model_validate(
        {
            "campaign": "c",
            "trial_id": "t",
            "agent": {"name": "base-model"},
            "base_model": {"id": "local/tiny", "path": "/m"},
            "task": {"name": "arithmetic"},
            "seed": 0,
            "budget": {"hours": 0.01, "gpus": 0},
        }
    )
    return json.loads(spec.model_dump_json())


def test_trial_json_newer_refused_in_one_line_older_and_current_read(tmp_path: Path) -> None:
    from ptbench.trial import TRIAL_SCHEMA

    trial = TrialDir(tmp_path)
    data = _trial_spec(trial)
    assert data["schema_version"] == TRIAL_SCHEMA
    trial.trial_json.write_text(json.dumps(data))
    assert trial.spec.trial_id == "t"
    del data["schema_version"]
    trial.trial_json.write_text(json.dumps(data))
    assert TrialDir(tmp_path).spec.schema_version == TRIAL_SCHEMA  # unversioned: version 1
    trial.trial_json.write_text(json.dumps({**data, "schema_version": TRIAL_SCHEMA + 1}))
    with pytest.raises(NewerSchema) as exc:
        _ = TrialDir(tmp_path).spec
    msg = str(exc.value)
    assert msg.startswith(str(trial.trial_json)) and "newer than this ptbench reads" in msg and "\n" not in msg
    trial.trial_json.write_text(json.dumps({**data, "seed": "x"}))
    with pytest.raises(UserError, match=r"corrupt trial spec \(field seed: .*re-plan with"):
        _ = TrialDir(tmp_path).spec


def test_a_newer_trajectory_leaves_the_api_check_unchecked_not_clean(tmp_path: Path) -> None:
    """The attack: a trajectory.json the checks cannot read as this version (newer, say) must not
    pass as one without forbidden commands. The control: the current version is read and scanned."""
    from ptbench.agents.traces.model import TRAJECTORY_SCHEMA
    from ptbench.integrity import api_usage
    from ptbench.integrity.context import CheckContext
    from ptbench.integrity.report import Unchecked

    (tmp_path / "agent").mkdir()
    step = {"kind": "tool", "tool_call": {"name": "bash", "arguments": {"command": "python -c 'import openai'"}}}
    ctx = CheckContext(trial_dir=tmp_path, spec=None)
    for version, readable in ((None, True), (TRAJECTORY_SCHEMA, True), (TRAJECTORY_SCHEMA + 1, False)):
        traj = {"agent": "a", "trace_format": "t", "steps": [step]}
        if version is not None:
            traj["schema_version"] = version
        (tmp_path / "agent" / "trajectory.json").write_text(json.dumps(traj))
        if readable:
            assert ctx.trajectory() is not None
            finding = api_usage.check(ctx)
            assert "agent/trajectory.json" in finding.details["sources"]
            assert finding.verdict == "flagged" and "imports openai" in finding.reason, finding
        else:
            assert ctx.trajectory() is None
            with pytest.raises(Unchecked, match="unreadable"):
                api_usage.check(ctx)


def test_bootcamp_traces_newer_or_foreign_refused_current_read() -> None:
    from ptbench.bootcamp.rollout.traces import TRACE_SCHEMA, TRACE_VERSION, current_trace

    rec = {"schema": TRACE_SCHEMA, "sample_id": "s"}
    assert current_trace(rec, where="w") == rec
    assert current_trace({"sample_id": "s"}, where="w") == rec  # a record without the tag: the current one
    with pytest.raises(NewerSchema) as exc:
        current_trace({**rec, "schema": f"ptbench.bootcamp.trace/{TRACE_VERSION + 1}"}, where="shard-0.jsonl")
    assert str(exc.value).startswith("shard-0.jsonl: schema_version 2 is newer") and "\n" not in str(exc.value)
    with pytest.raises(UserError, match="is not a ptbench.bootcamp.trace record"):
        current_trace({**rec, "schema": "ptbench.collation"}, where="w")


def test_the_collation_json_reads_back_and_a_newer_one_is_refused(tmp_path: Path) -> None:
    from ptbench.results.aggregate import collate
    from ptbench.results.tables import COLLATION_SCHEMA_VERSION, read_collation, to_json
    from tests.results.test_collate import record as make

    path = tmp_path / "results.json"
    data = to_json(collate([ResultRecord.model_validate(make("ref", "gsm8k", s, 0.5)) for s in (0, 1)], "nan"), [])
    path.write_text(json.dumps(data))
    assert read_collation(path) == data and data["schema_version"] == COLLATION_SCHEMA_VERSION
    path.write_text(json.dumps({**data, "schema_version": COLLATION_SCHEMA_VERSION + 1}))
    with pytest.raises(NewerSchema, match="results.json: schema_version 2 is newer"):
        read_collation(path)
    path.write_text(json.dumps({**data, "schema": "something.else"}))
    with pytest.raises(UserError, match="is not a collation"):
        read_collation(path)
