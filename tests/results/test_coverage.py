"""Integrity coverage where the numbers are, and the `not_applicable` verdict read right.

A collation of records with mixed verdicts says, per benchmark, which checks decided its trials, in
Markdown (under the table, 80 columns), CSV, JSON, LaTeX and the HTML report; a trial whose check has
no method for its task keeps its own score (the issue's reproduction), an `unchecked` one still
falls back; the trial page shows `not applicable` with its reason and no false `summary` check.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil

import pytest

from ptbench.results.aggregate import collate
from ptbench.results.collate import collate_dirs
from ptbench.results.latex import to_latex
from ptbench.results.report import build_report, page_name
from ptbench.results.schema import ResultRecord
from ptbench.results.tables import to_csv, to_json, to_markdown
from ptbench.status import integrity_flags
from tests.conftest import ptbench
from tests.integrity.conftest import make_trial
from tests.results import synthetic

CHECKS = {"contamination": "clean", "memorization": "clean", "model_identity": "clean", "api_usage": "clean"}
NO_METHOD = "open-ended writing prompts judged against a reference model: no single reference answer"


def verdicts(**changed: str) -> dict[str, str]:
    return {**CHECKS, **changed}


MIXED = [
    # gsm8k: every check decided both trials (one flagged by contamination)
    synthetic.record("x", "A", "gsm8k", 0, 0.50, integrity=verdicts()),
    synthetic.record("x", "A", "gsm8k", 1, 0.60, integrity=verdicts(contamination="flagged")),
    # arena: memorization has no method for the task on both trials
    synthetic.record("x", "A", "arena_hard_writing", 0, 1.00, integrity=verdicts(memorization="not_applicable")),
    synthetic.record("x", "A", "arena_hard_writing", 1, 0.90, integrity=verdicts(memorization="not_applicable")),
    # aime2025: memorization differs between trials; a trial without a model does not count
    synthetic.record("x", "A", "aime2025", 0, 0.20, integrity=verdicts(memorization="not_applicable")),
    synthetic.record("x", "A", "aime2025", 1, 0.30, integrity=verdicts(memorization="unchecked")),
    synthetic.record("x", "B", "aime2025", 1, None, "no_model", integrity={}),
]
for r in MIXED:
    if r["integrity"].get("memorization") == "not_applicable":
        r["integrity_detail"] = {"memorization": NO_METHOD}

GSM8K = "gsm8k, 2 trials: decided by contamination (1 clean, 1 flagged), memorization, model_identity, api_usage (4/4)"
ARENA = (
    "arena_hard_writing, 2 trials: decided by contamination, model_identity, api_usage (3/4); "
    "memorization not applicable"
)
AIME = (
    "aime2025, 2 trials: decided by contamination, model_identity, api_usage (3/4); "
    "memorization 1 unchecked, 1 not applicable"
)


def mixed_collation():
    return collate([ResultRecord.model_validate(r) for r in MIXED + synthetic.BASELINES], "base_fallback")


def test_coverage_counts_each_check_per_benchmark():
    by_task = {cov.task: cov for cov in mixed_collation().coverage}
    assert list(by_task) == ["aime2025", "arena_hard_writing", "gsm8k"]  # the table's order
    gsm, arena, aime = by_task["gsm8k"], by_task["arena_hard_writing"], by_task["aime2025"]
    assert gsm.decided == list(CHECKS) and gsm.verdicts["contamination"] == {"clean": 1, "flagged": 1}
    assert arena.not_applicable == ["memorization"] and arena.undecided == []
    assert aime.trials == 2  # the no_model trial takes its status's rule whatever its verdicts
    assert aime.undecided == ["memorization"] and aime.verdicts["memorization"] == {"unchecked": 1, "not_applicable": 1}
    assert (gsm.text(), arena.text(), aime.text()) == (GSM8K, ARENA, AIME)


def test_a_trial_with_no_verdict_counts_unchecked_for_the_checks_its_benchmark_ran():
    trials = [
        synthetic.record("x", "A", "gsm8k", 0, 0.5, integrity=verdicts()),
        synthetic.record("x", "A", "gsm8k", 1, 0.5, integrity={}),  # no check ran
        synthetic.record("x", "A", "aime2025", 0, 0.5, integrity={}),
        synthetic.record("x", "A", "humaneval", 0, 0.5, integrity=verdicts(api_usage="bogus")),
    ]
    c = collate([ResultRecord.model_validate(r) for r in trials], "exclude")
    by_task = {cov.task: cov for cov in c.coverage}
    assert by_task["gsm8k"].decided == [] and by_task["gsm8k"].verdicts["memorization"] == {"clean": 1, "unchecked": 1}
    assert by_task["aime2025"].text() == "aime2025, 1 trial: no integrity check ran"
    assert by_task["humaneval"].verdicts["api_usage"] == {"unchecked": 1}  # an unknown word is never a decision


def test_coverage_in_markdown_csv_json_and_latex():
    c = mixed_collation()
    md = to_markdown(c)
    table = md.split("\n\n")[1].splitlines()
    assert table[0] == "| agent | aime2025 | arena_hard_writing | gsm8k | weighted avg |"  # no column added
    block = md.split("\n\n")[3].splitlines()  # under the table, after the rule line and notes
    assert block[0].startswith("Integrity coverage:") and all(len(line) <= 80 for line in block)
    items = re.split(r"\n- ", "\n".join(block))[1:]
    assert [" ".join(item.split()) for item in items] == [AIME, ARENA, GSM8K]

    rows = [r for r in csv.DictReader(io.StringIO(to_csv(c))) if r["table"] == "coverage"]
    assert [(r["task"], r["n"], r["integrity_coverage"]) for r in rows] == [
        ("aime2025", "2", AIME),
        ("arena_hard_writing", "2", ARENA),
        ("gsm8k", "2", GSM8K),
    ]
    other = [r for r in csv.DictReader(io.StringIO(to_csv(c))) if r["table"] != "coverage"]
    assert other and all(r["integrity_coverage"] == "" for r in other)

    data = json.loads(json.dumps(to_json(c, []), allow_nan=False))
    aime = next(cov for cov in data["coverage"] if cov["task"] == "aime2025")
    assert aime["checks"]["memorization"] == {"unchecked": 1, "not_applicable": 1} and aime["text"] == AIME
    assert aime["decided"] == ["contamination", "model_identity", "api_usage"] and aime["undecided"] == ["memorization"]

    tex = to_latex(c)
    assert (
        r"arena\_hard\_writing, 2 trials: decided by contamination, model\_identity, api\_usage (3/4); memorization "
        r"not applicable." in tex
    )
    assert r"gsm8k, 2 trials: decided by contamination (1 clean, 1 flagged), memorization" in tex


def test_not_applicable_keeps_the_trials_own_score_and_unchecked_still_falls_back(tmp_path):
    """The issue's reproduction: an honest trial whose memorization has no method for its task keeps
    its own 100.0 (`Trials by rule: N scored`); the same trial `unchecked` takes the base's 0.0."""
    base = [synthetic.baseline("base-zero-shot", "base (zero-shot)", "A", "arena_hard_writing", 0.0)]

    def run(memorization: str, name: str):
        trials = [
            synthetic.record("honest", "A", "arena_hard_writing", seed, 1.0, integrity=verdicts(memorization=v))
            for seed, v in enumerate(("clean", "clean", "clean", memorization))
        ]
        cdir = synthetic.write(tmp_path / name, trials, base)
        return ptbench("collate", str(cdir), "--out", str(tmp_path / name / "t"), "--no-plots", timeout=120)

    kept = run("not_applicable", "na")
    assert kept.returncode == 0, kept.stderr
    assert "| honest | 100.0 ± 0.0 (n=4) |" in kept.stdout
    assert "Trials by rule: 4 scored; 0 base_fallback; 0 excluded; 0 nan; 0 no_baseline." in kept.stdout
    assert "memorization 3 clean, 1 not applicable" in " ".join(kept.stdout.split())

    fell = run("unchecked", "un")
    assert fell.returncode == 0, fell.stderr
    assert "| honest | 75.0 ± 50.0 (n=4) †1 |" in fell.stdout
    assert "Trials by rule: 3 scored; 1 base_fallback (1 unchecked)" in fell.stdout
    assert "memorization 3 clean, 1 unchecked" in " ".join(fell.stdout.split())


def test_status_reads_not_applicable_as_no_problem():
    assert integrity_flags(verdicts(memorization="not_applicable")) == ""
    assert integrity_flags(verdicts(memorization="unchecked")) == "integrity: memorization unchecked"
    assert integrity_flags({}) == "integrity: unchecked"


def test_html_report_shows_coverage_and_the_trial_page_reads_not_applicable(tmp_path):
    cdir = synthetic.write(tmp_path / "results", MIXED, synthetic.BASELINES)
    trial = next(r for r in MIXED if r["task"]["name"] == "arena_hard_writing")
    checks = cdir / trial["trial_id"] / "checks"
    checks.mkdir()
    for name, verdict in trial["integrity"].items():
        reason = NO_METHOD if verdict == "not_applicable" else "nothing found"
        (checks / f"{name}.json").write_text(json.dumps({"check": name, "verdict": verdict, "reason": reason}))
    (checks / "verdicts.json").write_text(json.dumps(trial["integrity"]))
    (checks / "summary.json").write_text(json.dumps({"overall": "clean", "reasons": {}, "notes": []}))

    result = collate_dirs([cdir])
    build_report(result, tmp_path / "site")
    index = (tmp_path / "site" / "index.html").read_text()
    assert '<table id="coverage">' in index
    assert (
        "<tr><td>arena_hard_writing</td><td>2</td><td>contamination, model_identity, api_usage (3/4)</td>"
        '<td class="not_applicable">memorization</td><td class="unchecked"></td></tr>'
    ) in index
    assert (
        "<tr><td>aime2025</td><td>2</td><td>contamination, model_identity, api_usage (3/4)</td>"
        '<td class="not_applicable"></td><td class="unchecked">memorization: 1 unchecked, 1 not applicable</td></tr>'
    ) in index

    page = (tmp_path / "site" / "trials" / page_name("c1", trial["trial_id"])).read_text()
    rows = re.findall(r"<tr><td>(\w+)</td><td class=\"(\w+)\">([\w ]+)</td>", page.split('id="integrity"')[1])
    assert sorted(rows) == sorted(
        [(n, v, v.replace("_", " ")) for n, v in trial["integrity"].items()]
    )  # no summary row, not applicable spelled out
    assert "summary" not in {name for name, _, _ in rows}
    assert NO_METHOD in page and "counts in tables as</th><td>100.0 — scored" in page

    # a trial page whose verdict is not in checks/: the record's reason is shown
    other = next(r for r in MIXED if r["task"]["name"] == "aime2025" and r["seed"] == 0)
    page = (tmp_path / "site" / "trials" / page_name("c1", other["trial_id"])).read_text()
    assert 'class="not_applicable">not applicable</td><td><pre>' + NO_METHOD in page


@pytest.mark.slow  # the real check in a child process, on a tiny model made for the session
def test_check_command_prints_not_applicable_with_its_reason(tmp_path, tiny_model):
    """`ptbench check` on a trial whose memorization has no method for its task (arena): the real
    check and runner decide it, the line reads `not applicable` with the reason, and it is no failure."""
    trial = make_trial(
        tmp_path, task="arena_hard_writing", base=str(tiny_model), integrity={"checks": ["memorization"]}
    )
    shutil.copytree(tiny_model, trial.final_model)
    run = ptbench("check", str(trial.path), timeout=300)
    assert run.returncode == 0, run.stderr
    line = next(line for line in run.stdout.splitlines() if line.startswith("memorization"))
    assert line.split()[1:3] == ["not", "applicable"] and "no single reference answer" in line
    assert json.loads((trial.checks_dir / "verdicts.json").read_text()) == {"memorization": "not_applicable"}
