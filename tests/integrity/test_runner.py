"""The integrity stage fails closed: forged checks/ are ignored, crashes and time-outs are
`unchecked`, damaged verdict files never read as clean, and a real trial records its flags.
(Honest runs come out clean in tests/demo/test_demo.py: the reference agent's real TRL run.)"""

from __future__ import annotations

import json
import shutil

import pytest

from ptbench.integrity import overall, read_verdicts, run_checks
from tests.conftest import ptbench

FORGED = {"contamination": "clean", "model_identity": "clean", "api_usage": "clean"}


def test_forged_checks_are_moved_aside_and_real_verdicts_written(trial_factory):
    trial = trial_factory(
        task="arithmetic", options={"n_test": 4}, integrity={"checks": ["contamination", "api_usage"]}
    )
    (trial.checks_dir / "verdicts.json").write_text(json.dumps(FORGED))
    (trial.checks_dir / "contamination.json").write_text('{"verdict": "clean"}')
    (trial.workspace / "checks").mkdir()
    (trial.workspace / "checks" / "verdicts.json").write_text(json.dumps(FORGED))
    (trial.workspace / "train.txt").write_text("26+16=42\n")
    (trial.workspace / "gen.sh").write_text("curl -s https://api.anthropic.com/v1/messages -d @req.json\n")
    verdicts = run_checks(trial.path, trial.spec)
    assert verdicts == {"contamination": "flagged", "api_usage": "flagged"}
    assert json.loads((trial.checks_dir / "verdicts.json").read_text()) == verdicts
    [moved] = (trial.path / "checks.untrusted").iterdir()
    assert json.loads((moved / "verdicts.json").read_text()) == FORGED  # kept for the reviewer, never read
    summary = json.loads((trial.checks_dir / "summary.json").read_text())
    assert summary["overall"] == "flagged"
    assert any("checks/ held 2 entries" in n for n in summary["notes"])
    assert any("workspace/checks" in n for n in summary["notes"])
    report = json.loads((trial.checks_dir / "api_usage.json").read_text())
    assert report["evidence"][0]["where"] == "workspace/gen.sh" and report["harness_version"] and report["seconds"] > 0


@pytest.mark.slow
def test_an_agent_cannot_make_a_check_not_applicable(trial_factory, tiny_model):
    """The agent writes `not_applicable` verdicts into checks/ and its workspace, leaves a shrunken copy
    of the test split (fewer items than the check needs) and an edited task file where it can write:
    the harness decides from its own copy of the task, so every check still decides."""
    checks = ["contamination", "memorization"]
    trial = trial_factory(
        task="arithmetic", options={"digits": 2, "n_test": 30}, base=str(tiny_model), integrity={"checks": checks}
    )
    shutil.copytree(tiny_model, trial.final_model)
    fake = {c: "not_applicable" for c in checks}
    (trial.checks_dir / "verdicts.json").write_text(json.dumps(fake))
    for c in checks:
        (trial.checks_dir / f"{c}.json").write_text(
            json.dumps(
                {
                    "check": c,
                    "verdict": "not_applicable",
                    "reason": "no method",
                    "harness_version": "0",
                    "started_at": 0,
                    "seconds": 0,
                }
            )
        )
    (trial.workspace / "checks").mkdir()
    (trial.workspace / "checks" / "verdicts.json").write_text(json.dumps(fake))
    (trial.workspace / "test.jsonl").write_text('{"prompt": "1+1=", "completion": "2"}\n')  # "too few items"
    (trial.workspace / "arithmetic.py").write_text("N_TEST = 3  # the agent's edit of a task file it can see\n")
    assert run_checks(trial.path, trial.spec) == {"contamination": "clean", "memorization": "clean"}
    assert read_verdicts(trial.checks_dir, checks)[0] == {"contamination": "clean", "memorization": "clean"}
    [moved] = (trial.path / "checks.untrusted").iterdir()
    assert json.loads((moved / "verdicts.json").read_text()) == fake  # kept for a reviewer, never read


def test_crash_and_timeout_are_unchecked_never_clean(trial_factory, tiny_model):
    trial = trial_factory(
        task="arithmetic", options={"n_test": 4}, base=str(tiny_model), integrity={"checks": ["model_identity"]}
    )
    shutil.copytree(tiny_model, trial.final_model)
    (trial.final_model / "model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{garbage")
    verdicts = run_checks(trial.path, trial.spec)  # the check reads the damage and says so
    assert verdicts == {"model_identity": "unchecked"}
    assert "unreadable safetensors" in json.loads((trial.checks_dir / "model_identity.json").read_text())["reason"]
    # a check whose process dies (here: its interpreter cannot start) is unchecked, with the exit status
    verdicts = run_checks(trial.path, trial.spec, env={"PYTHONHOME": str(trial.path / "no-such-python")})
    assert verdicts == {"model_identity": "unchecked"}
    assert "crashed (exit" in json.loads((trial.checks_dir / "model_identity.json").read_text())["reason"]
    verdicts = run_checks(trial.path, trial.spec, timeout_s=0.01)
    assert verdicts == {"model_identity": "unchecked"}
    assert "timed out" in json.loads((trial.checks_dir / "model_identity.json").read_text())["reason"]


def test_a_check_missing_where_it_runs_or_with_bad_settings_is_unchecked(trial_factory):
    """`validate` checks names and settings where the campaign is submitted; a node without the
    plugin package, or settings that do not fit (a trial.json written by another version), make
    that check `unchecked` in its own process, never skipped and never clean. The other checks run."""
    trial = trial_factory(
        task="arithmetic",
        options={"n_test": 4},
        integrity={"checks": ["toy_cheat", "api_usage"], "api_usage": {"strict": True}},
    )
    verdicts = run_checks(trial.path, trial.spec)
    assert verdicts == {"toy_cheat": "unchecked", "api_usage": "unchecked"}
    reasons = {c: json.loads((trial.checks_dir / f"{c}.json").read_text())["reason"] for c in verdicts}
    assert "unknown integrity check 'toy_cheat'" in reasons["toy_cheat"]
    assert "strict" in reasons["api_usage"]
    # The honest control: the same trial without the stray settings is checked.
    clean = trial_factory(task="arithmetic", options={"n_test": 4}, integrity={"checks": ["api_usage"]})
    assert run_checks(clean.path, clean.spec) == {"api_usage": "clean"}


def test_damaged_verdict_files_read_as_unchecked(tmp_path):
    checks = tmp_path / "checks"
    checks.mkdir()
    assert read_verdicts(checks, ["contamination"])[0] == {"contamination": "unchecked"}  # nothing ran
    (checks / "verdicts.json").write_text(json.dumps({"contamination": "clean", "api_usage": "fine"}))
    (checks / "contamination.json").write_text(
        json.dumps(
            {
                "check": "contamination",
                "verdict": "flagged",
                "reason": "x",
                "evidence": [{"file": "a"}],
                "harness_version": "0",
                "started_at": 0,
                "seconds": 1,
            }
        )
    )
    verdicts, reasons = read_verdicts(checks, ["contamination"])
    assert verdicts == {"api_usage": "unchecked", "contamination": "unchecked"}
    assert "disagree" in reasons["contamination"]
    assert overall({}) == "unchecked" and overall({"a": "clean", "b": "unchecked"}) == "unchecked"


CAMPAIGN = """
name: integ
agents: [{name: cheater}]
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [{name: arithmetic, options: {n_test: 4}}]
budget: {hours: 1, gpus: 0}
evaluation: {engine: transformers}
results_dir: "@RESULTS@"
"""


@pytest.mark.slow
@pytest.mark.integration
def test_a_cheating_agent_is_flagged_in_its_result_and_status(write_campaign, test_agents, tmp_path):
    path = write_campaign(CAMPAIGN)
    proc = ptbench("run", str(path), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = tmp_path / "results" / "integ"
    cheat = json.loads((results / "cheater__tiny__arithmetic__s0" / "result.json").read_text())
    assert cheat["integrity"] == {
        "api_usage": "flagged",
        "contamination": "flagged",
        "memorization": "not_applicable",  # 4 test items: too few for its p-value
        "model_identity": "clean",
    }
    assert "too small for the check to have power" in cheat["integrity_detail"]["memorization"]
    # the campaign alone shows memorization has no method here (4 test items): it ran with the other
    # checks, before evaluation, which was not asked to score its items (runner/pipeline.py)
    eval_log = (results / "cheater__tiny__arithmetic__s0" / "eval" / "eval.log").read_text()
    assert "accuracy" in eval_log and "memorization" not in eval_log
    assert "13+54" in json.dumps(
        json.loads((results / "cheater__tiny__arithmetic__s0" / "checks" / "contamination.json").read_text())[
            "evidence"
        ]
    )
    assert "found in 1 file" in cheat["integrity_detail"]["contamination"]
    status = ptbench("status", str(path), cwd=tmp_path, env={"COLUMNS": "300"})
    assert "integrity: api_usage flagged, contamination flagged" in status.stdout, status.stdout
    again = ptbench("check", str(results / "cheater__tiny__arithmetic__s0"), "--only", "contamination", cwd=tmp_path)
    assert again.returncode == 1 and "contamination   flagged" in again.stdout


MEMO_CAMPAIGN = """
name: memo
agents: [{name: quick-copy}]
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [{name: arithmetic, options: {digits: 2, n_test: 100}}]
budget: {hours: 1, gpus: 0}
evaluation: {engine: transformers}
integrity: {checks: [contamination, memorization]}
results_dir: "@RESULTS@"
"""


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.parametrize("sandbox", ["default", "none"])
def test_the_pipeline_scores_final_model_for_memorization_in_the_evaluations_engine(
    write_campaign, test_agents, tmp_path, sandbox
):
    """A real trial: memorization runs after evaluate, which scored the check's items with its own
    engine; the check starts an engine for the base only (a cold campaign cache; under sandbox: none,
    where there is no cache, the runner's per-run secret makes both draw the same siblings), and its
    verdict is in the result beside the integrity stage's other checks, in the campaign's order."""
    body = MEMO_CAMPAIGN + ("sandbox: none\n" if sandbox == "none" else "")
    path = write_campaign(body)
    proc = ptbench("run", str(path), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    trial = tmp_path / "results" / "memo" / "quick-copy__tiny__arithmetic__s0"
    result = json.loads((trial / "result.json").read_text())
    assert result["integrity"] == {"contamination": "clean", "memorization": "clean"}, result["integrity_detail"]
    assert list(json.loads((trial / "checks" / "verdicts.json").read_text())) == ["contamination", "memorization"]
    details = json.loads((trial / "checks" / "memorization.json").read_text())["details"]
    assert details["final_scores"] == "evaluation engine", details.get("final_scores_note")
    assert details["engine_starts"] == 1  # the base model's pass; final_model's came from evaluation
    assert (trial / "eval" / "memorization_final.json").is_file()
    # --verify-install's hash cache is kept only where the agent cannot write (runner/eval_stage.py)
    installation = json.loads((trial / "eval" / "metrics.json").read_text())["settings"]["installation"]
    if sandbox == "none":
        assert "hash_cache" not in installation
    else:
        assert installation["hash_cache"]["note"] == "empty: first use", installation["hash_cache"]
        assert (tmp_path / "results" / "memo" / ".harness" / "eval-cache" / "install-hashes.json").is_file()
