"""Native outputs captured from the real CLIs (tests/testing/data) parse into the common trajectory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ptbench.agents.failures import classify
from ptbench.agents.traces import parse_native_log, write_traces

DATA = Path(__file__).resolve().parents[1] / "testing" / "data"
FORMATS = {
    "claude-code": "claude-stream-json",
    "codex": "codex-json",
    "gemini-cli": "gemini-stream-json",
    "opencode": "opencode-json",
}


@pytest.mark.parametrize("cli", sorted(FORMATS))
def test_first_and_resumed_session_parse(cli: str, tmp_path: Path) -> None:
    log = (
        (DATA / f"{cli}_stream.jsonl").read_text()
        + '{"ptbench_run": 2, "mode": "continue"}\n'
        + (DATA / f"{cli}_resume_stream.jsonl").read_text()
    )
    (tmp_path / "native.log").write_text("stderr noise before\n" + log)
    traj = write_traces(tmp_path, FORMATS[cli], agent=cli, model="m")
    calls = traj.tool_calls()
    assert len(calls) == 2 and all(c.status == "ok" for c in calls)
    assert "made_by_shell.txt" in json.dumps(calls[0].arguments)
    assert "hello-from-script" in (calls[0].output or "")
    assert "second.txt" in json.dumps(calls[1].arguments)
    assert [s.text for s in traj.steps if s.kind == "message"] == ["First session done.", "Resumed session done."]
    assert traj.final_message == "Resumed session done."
    assert [r.run for r in traj.runs] == [1, 2] and traj.runs[1].mode == "continue"
    assert traj.session_id and traj.runs[0].session_id == traj.runs[1].session_id
    assert traj.usage.input_tokens > 0 and traj.usage.output_tokens > 0 and traj.errors == []
    usage = json.loads((tmp_path / "usage.json").read_text())
    assert usage["total_tokens"] == traj.usage.input_tokens + traj.usage.output_tokens and usage["tool_calls"] == 2
    if cli == "claude-code":
        assert usage["cost_usd"] == pytest.approx(0.134052 + 0.269535, rel=1e-3) or usage["cost_usd"] > 0


ERRORS = DATA / "errors"
EXPECTED = {
    "rate_limit": "rate_limit",
    "auth": "auth",
    "context_length": "context_window",
    "quota": "quota",
    "overloaded": "overloaded",
}


@pytest.mark.parametrize("path", sorted(ERRORS.glob("*.jsonl")), ids=lambda p: p.stem)
def test_failures_classified_from_real_error_outputs(path: Path) -> None:
    cli, kind = path.stem.split("_", 1)
    text = path.read_text() + path.with_suffix(".stderr.txt").read_text()
    traj = parse_native_log(text, FORMATS[cli], agent=cli)
    failure = classify(traj, text, 1)
    expected = EXPECTED[kind]
    if cli == "gemini-cli" and kind == "quota":
        expected = "rate_limit"  # Gemini answers both with 429 RESOURCE_EXHAUSTED
    assert failure is not None and failure.kind == expected, failure
    assert failure.retryable == (expected in ("rate_limit", "overloaded"))
    assert failure.message


def test_clean_exit_is_no_failure_and_crash_is_classified() -> None:
    ok = parse_native_log((DATA / "codex_stream.jsonl").read_text(), "codex-json")
    assert classify(ok, "", 0) is None
    crashed = parse_native_log("panicked at 'index out of bounds', src/main.rs:1\n", "codex-json")
    failure = classify(crashed, "panicked at 'index out of bounds', src/main.rs:1\n", 101)
    assert failure is not None and failure.kind == "cli_crash" and failure.retryable
    killed = classify(crashed, "", -11)
    assert killed is not None and killed.kind == "cli_crash"
    unknown = classify(parse_native_log("usage: bad flag\n", "text"), "usage: bad flag\n", 2)
    assert (
        unknown is not None and unknown.kind == "agent_exit" and not unknown.retryable and "bad flag" in unknown.message
    )
