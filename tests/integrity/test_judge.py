"""The optional LLM judge: a real agent CLI (Claude Code) driven by the scripted provider writes
its verdict file, which is parsed; a judge that crashes or writes garbage is `unchecked`."""

from __future__ import annotations

import json
import os
import stat

import pytest

from ptbench.agents import load_agent
from ptbench.agents.launcher import find_executable
from ptbench.integrity.context import CheckContext
from ptbench.integrity.judge import check
from ptbench.integrity.report import Unchecked
from ptbench.sandbox.bwrap import bwrap_problem
from tests.support import require

from .conftest import make_trial, write_trajectory

VERDICT = {
    "contamination": {
        "verdict": "flagged",
        "justification": "make_data.py copies test questions into data/sft.jsonl (line 4)",
    },
    "disallowed_model_use": {"verdict": "clean", "justification": "only the given base model is loaded"},
}


def judged(trial_factory, agent: str, **judge):
    trial = trial_factory(
        task="arithmetic",
        options={"n_test": 4},
        integrity={"checks": ["judge"], "judge": {"agent": agent, "minutes": 5, **judge}},
    )
    (trial.workspace / "make_data.py").write_text("print('hello')\n")
    write_trajectory(trial, ["python make_data.py"])
    return trial, CheckContext(trial_dir=trial.path, spec=trial.spec)


@pytest.mark.slow
def test_a_real_cli_judge_writes_a_verdict_that_is_parsed(trial_factory, scripted_provider, monkeypatch):
    # The judge finds its CLI the way the solve stage does (npm prefix of the repo, or PATH).
    require(
        find_executable(load_agent("claude-code")) is not None,
        "claude-code not installed: bash scripts/install.sh test",
    )
    provider = scripted_provider(
        [{"write_file": {"path": "verdict.json", "content": json.dumps(VERDICT)}}, {"message": "Reviewed."}]
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-canary-judge-7d1e")
    monkeypatch.setattr("ptbench.launch.trial_gateway.make_not_dumpable", lambda: None)  # this is pytest's process
    trial, ctx = judged(
        trial_factory, "claude-code", model="claude-sonnet-4-5", options={"base_url": provider.base_url}
    )
    record = trial.path / "record"
    record.mkdir()
    said = {"call": 1, "dir": "response", "route": "agent", "status": 200, "text": "I will train on the test set"}
    (record / "transcript.jsonl").write_text(json.dumps(said) + "\n")
    f = check(ctx)
    assert f.verdict == "flagged", f
    # the gateway's transcript reached the judge, read-only, and its prompt says what it is
    seen = trial.path / "judge" / "workspace" / "evidence" / "transcript.jsonl"
    assert json.loads(seen.read_text()) == said and not seen.stat().st_mode & stat.S_IWUSR
    assert "evidence/transcript.jsonl" in json.dumps(provider.requests)
    assert f.evidence == [{"question": "contamination", "justification": VERDICT["contamination"]["justification"]}]
    assert f.details["answers"]["disallowed_model_use"]["verdict"] == "clean"
    prompt = json.dumps(provider.requests)
    assert "evidence/trajectory.json" in prompt and "arithmetic" in prompt  # the shipped prompt reached the model
    copy = trial.path / "judge" / "workspace" / "evidence" / "workspace" / "make_data.py"
    assert copy.read_text() == "print('hello')\n" and not copy.stat().st_mode & stat.S_IWUSR
    assert "sk-canary-judge-7d1e" not in (trial.path / "judge" / "agent" / "native.log").read_text()
    assert not (trial.workspace / "verdict.json").exists()  # nothing written into the agent's tree
    # its model calls went through a gateway of its own: the CLI sent a trial token, the provider got the key
    assert (trial.path / "judge" / "agent" / "calls.jsonl").is_file()
    assert provider.redact("sk-canary-judge-7d1e") == "[REDACTED]"  # it learns a secret from a key header only


KEY = "sk-canary-probe-41c9"


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_a_judge_told_by_the_agent_to_tamper_reaches_neither_the_trial_nor_the_key(
    trial_factory, test_agents, monkeypatch, sandbox
):
    """The judge reads what the agent wrote: a workspace can tell it to rewrite a check's verdict and
    to read the key. Under bwrap its work folder is all it can write or see of the trial; under any
    sandbox its CLI holds the gateway's trial token, not the key. `none` is the control: the same
    judge, unsandboxed by the campaign's choice, does reach the trial (the probe works)."""
    require(sandbox == "none" or bwrap_problem() is None, f"bwrap unusable here: {bwrap_problem()}")
    monkeypatch.setenv("PROBE_API_KEY", KEY)
    monkeypatch.setattr("ptbench.launch.trial_gateway.make_not_dumpable", lambda: None)  # this is pytest's process
    trial, ctx = judged(trial_factory, "judge-prober", model="m", options={"base_url": "http://127.0.0.1:9"})
    ctx = CheckContext(trial_dir=trial.path, spec=ctx.spec.model_copy(update={"sandbox": sandbox}))
    verdict = {"verdict": "flagged", "reason": "the test items gained more than their siblings"}
    (trial.checks_dir / "memorization.json").write_text(json.dumps(verdict))
    assert check(ctx).verdict == "clean"  # it ran and its verdict was read
    seen = trial.path / "judge" / "workspace"
    env = (seen / "probe-env.txt").read_text()
    assert KEY not in env and "PROBE_API_KEY=" in env  # a key variable, holding the trial token
    assert os.environ["PROBE_API_KEY"] == KEY  # the harness keeps it for a second judge
    tampered = json.loads((trial.checks_dir / "memorization.json").read_text()) != verdict
    if sandbox == "bwrap":
        assert not tampered and not (seen / "probe-wrote.txt").exists()
        assert "checks" not in (seen / "probe-above.txt").read_text().split()
    else:
        assert tampered and (seen / "probe-wrote.txt").exists()


@pytest.mark.parametrize(
    "agent, why", [("judge-crash", "exited with code 3"), ("judge-garbage", "invalid verdict.json")]
)
def test_a_judge_that_crashes_or_writes_garbage_is_unchecked(trial_factory, test_agents, agent, why):
    _, ctx = judged(trial_factory, agent)
    with pytest.raises(Unchecked, match=why):
        check(ctx)


def says(contamination: str, model_use: str = "clean") -> dict:
    return {"agent": "judge-says", "minutes": 5, "options": {"contamination": contamination, "model_use": model_use}}


def several(root, judges: list[dict]):
    """A fresh trial per case (under its own root): several judges are listed under integrity.judge."""
    trial = make_trial(root, task="arithmetic", options={"n_test": 4}, integrity={"checks": ["judge"], "judge": judges})
    return trial, CheckContext(trial_dir=trial.path, spec=trial.spec)


def test_several_judges_decide_by_majority_with_their_agreement(tmp_path, test_agents):
    # two flag contamination, one disagrees: flagged by majority; model use: all three say clean
    trial, ctx = several(tmp_path / "c1", [says("flagged"), says("clean"), says("flagged")])
    f = check(ctx)
    assert f.verdict == "flagged" and "a majority of 3 judges flagged contamination" in f.reason
    assert [e["judge"].split()[0] for e in f.evidence] == ["judge-1", "judge-3"]
    assert f.details["majority"] == {"contamination": "flagged", "disallowed_model_use": "clean"}
    # items: contamination [f, c, f] (1 of 3 pairs agree), model use [c, c, c] -> P-bar 2/3;
    # shares flagged 2/6, clean 4/6 -> P_e 5/9; Fleiss' kappa (2/3 - 5/9) / (4/9) = 1/4
    a = f.details["agreement"]
    assert a["percent_agreement"] == pytest.approx(2 / 3) and a["kappa"] == pytest.approx(0.25)
    assert a["kappa_kind"] == "fleiss" and a["judges"] == 3
    assert all((trial.path / f"judge-{i}" / "workspace" / "verdict.json").is_file() for i in (1, 2, 3))
    # the minority is outvoted the other way round too
    _, ctx = several(tmp_path / "c2", [says("clean"), says("flagged"), says("clean")])
    assert check(ctx).verdict == "clean"


def test_several_judges_without_a_majority_are_unchecked(tmp_path, test_agents):
    _, ctx = several(tmp_path / "c3", [says("flagged"), says("clean")])  # a split: never clean
    with pytest.raises(Unchecked, match="no majority of the 2 judges on contamination"):
        check(ctx)
    # one judge of three crashes and the two that answered disagree: no majority of the three
    _, ctx = several(tmp_path / "c4", [says("flagged"), {"agent": "judge-crash", "minutes": 5}, says("clean")])
    with pytest.raises(Unchecked, match="no majority"):
        check(ctx)
    # one crashes, the other two agree on clean: 2 of 3 configured judges is a majority
    _, ctx = several(tmp_path / "c5", [says("clean"), {"agent": "judge-crash", "minutes": 5}, says("clean")])
    f = check(ctx)
    assert f.verdict == "clean" and "exited with code 3" in f.details["judges"][1]["error"]
    assert f.details["agreement"]["kappa_kind"] == "cohen"


def test_the_result_record_carries_the_judges_agreement(tmp_path, test_agents):
    """Three real judge CLIs that disagree on one question: checks/judge.json (as the runner writes
    it) holds their agreement and the trial's result record carries it for the tables; a report with
    a malformed agreement, or none, or no report at all, gives no agreement (never a guess)."""
    from ptbench.integrity.report import CheckReport, read_judge_agreement
    from ptbench.runner.record import build
    from ptbench.trial import StageMark, TrialState

    trial, ctx = several(tmp_path / "c6", [says("flagged"), says("clean"), says("flagged")])
    f = check(ctx)
    checks = trial.path / "checks"
    checks.mkdir(exist_ok=True)
    report = CheckReport(check="judge", harness_version="0", started_at=0.0, seconds=1.0, **f.model_dump())
    (checks / "judge.json").write_text(report.model_dump_json())
    (checks / "verdicts.json").write_text(json.dumps({"judge": "flagged"}))
    state = TrialState(
        stages={
            "solve": StageMark(done_at=1, outcome="ok"),
            "collect": StageMark(done_at=1, outcome="ok", detail={"found": False}),
            "evaluate": StageMark(done_at=1, outcome="skipped"),
        }
    )
    record = build(trial, state)
    assert record.integrity == {"judge": "flagged"}
    assert record.integrity_judge_agreement == {
        "judges": 3,
        "items": 2,
        "percent_agreement": pytest.approx(2 / 3),
        "kappa": pytest.approx(0.25),  # hand-computed in the test above
        "kappa_kind": "fleiss",
    }
    for details in [{}, {"agreement": {"judges": "3", "items": 2}}, {"agreement": {"judges": 1, "items": 2}}]:
        (checks / "judge.json").write_text(report.model_copy(update={"details": details}).model_dump_json())
        assert read_judge_agreement(checks) is None
    (checks / "judge.json").write_text("{not json")
    assert read_judge_agreement(checks) is None and build(trial, state).integrity_judge_agreement is None


def test_a_judge_that_would_hold_the_real_key_is_unchecked_and_never_starts(trial_factory, test_agents, monkeypatch):
    """A judge CLI with a key and no gateway route (no `upstream`) would get the real key in its own
    environment while it reads agent-written text: it is refused, as such an agent is for a trial."""
    monkeypatch.setenv("PROBE_API_KEY", KEY)
    trial, ctx = judged(trial_factory, "judge-keyholder", model="m")
    with pytest.raises(Unchecked, match="judge could not start"):
        check(ctx)
    assert not (trial.path / "judge" / "workspace" / "probe-env.txt").exists()
