"""The "judge agreement" columns (task judges; integrity judges): per agent in the Markdown and LaTeX
tables and the report's index (mean over the agent's trials with several judges), per row in the CSV
and the collation JSON, per trial in the JSON, the index's trial table and the trial page; absent
when no trial had several judges."""

from __future__ import annotations

import copy
import csv
import io
import json
import shutil
import subprocess

import pytest

from ptbench.results.aggregate import collate
from ptbench.results.agreement import agreement
from ptbench.results.schema import ResultRecord
from ptbench.results.tables import to_markdown
from tests.conftest import ptbench
from tests.results import synthetic
from tests.support import require

JUDGED = {
    "x__A__gsm8k__s0": {"judge_count": 3, "judge_agreement": 0.8, "judge_kappa": 0.5, "judge_kappa_kind": "fleiss"},
    "x__A__gsm8k__s1": {"judge_count": 3, "judge_agreement": 0.6, "judge_kappa": 0.1, "judge_kappa_kind": "fleiss"},
}


def judged_trials() -> list[dict]:
    trials = copy.deepcopy(synthetic.TRIALS)
    for r in trials:
        r["extra_metrics"] = JUDGED.get(r["trial_id"], {})
    return trials


def test_markdown_has_the_column_only_with_several_judges():
    records = [ResultRecord(**r) for r in judged_trials() + synthetic.BASELINES]
    md = to_markdown(collate(records, "base_fallback"))
    head = md.splitlines()[2]
    assert head.endswith("| weighted avg | judge agreement |")
    x_row = next(line for line in md.splitlines() if line.startswith("| x |"))
    assert x_row.endswith("| κ 0.30, 70 % agree (n=2) |")  # mean of 0.5 and 0.1; of 80 % and 60 %
    y_row = next(line for line in md.splitlines() if line.startswith("| y |"))
    assert y_row.endswith("|  |")  # y's trials had one judge each
    assert "Fleiss' kappa" in md
    plain = to_markdown(collate([ResultRecord(**r) for r in synthetic.TRIALS], "base_fallback"))
    assert "judge agreement" not in plain


def test_report_shows_agreement_in_index_and_trial_page(tmp_path):
    cdir = synthetic.write(tmp_path / "results", trials=judged_trials())
    run = ptbench("report", str(cdir), "--out", str(tmp_path / "site"), timeout=180)
    assert run.returncode == 0, run.stderr
    index = (tmp_path / "site" / "index.html").read_text()
    assert "<th>judge agreement</th>" in index and "κ 0.30, 70 % agree (n=2)" in index
    assert "κ 0.50 (Fleiss), 80 % agree, 3 judges" in index  # the trial table's cell
    page = (tmp_path / "site" / "trials" / "c1__x__A__gsm8k__s1.html").read_text()
    assert "κ 0.10 (Fleiss), 60 % agree, 3 judges" in page
    other = (tmp_path / "site" / "trials" / "c1__y__A__gsm8k__s0.html").read_text()
    assert "judge agreement" not in other


def test_a_different_set_of_judges_is_not_comparable():
    """Scores averaged over three judges are another metric than one judge's, even when the first
    judge is the same: collate refuses to put them in one column."""
    from ptbench.core.errors import UserError
    from ptbench.results.comparable import check_comparable

    def rec(trial: str, judges: list[str] | None) -> ResultRecord:
        r = synthetic.record("x", "A", "healthbench_easy", int(trial[-1]), 0.5)
        r["trial_id"] = trial
        r["evaluation"] = {
            "test_set": {"sha256": "a" * 64},
            "judge": {"base_url": "https://j/v1", "model": "gpt-5-mini"},
            **({"judges": judges} if judges else {}),
        }
        return ResultRecord(**r)

    assert check_comparable([rec("t1", ["gpt-5-mini", "o4-mini"]), rec("t2", ["gpt-5-mini", "o4-mini"])]) == []
    with pytest.raises(UserError, match="judge differs"):
        check_comparable([rec("t1", None), rec("t2", ["gpt-5-mini", "o4-mini"])])


def _scored_agreement(tmp_path, judges: list[str]) -> dict:
    """A real judged score: HealthBench Easy against the scripted local judge, with a contrarian judge
    that always disagrees; returns the extra_metrics the trial's result.json would carry."""
    from ptbench.tasks import get_task
    from tests.tasks.conftest import HEALTHBENCH_FIXTURE
    from tests.tasks.judge_server import ScriptedJudge

    with ScriptedJudge() as server:
        server.contrarians = {"contrarian"}
        task = get_task(
            "healthbench_easy",
            **HEALTHBENCH_FIXTURE,
            judge_base_url=server.base_url,
            judge_models=judges,
            judge_api_key_env="PTBENCH_TEST_JUDGE_KEY",
            judge_cache_dir=str(tmp_path / f"judge-cache-{len(judges)}"),
            judge_backoff_s=0.05,
            judge_max_retries=2,
        )
        return task.score_batch(task.test_examples(), ["an answer"] * 3).extra


def test_collate_writes_agreement_into_csv_latex_and_json_only_with_several_judges(tmp_path, monkeypatch):
    """`ptbench collate` and `ptbench report` on trials whose task-judge agreement comes from real
    judging (three judges: Fleiss' kappa -13/36, 1/3 agree; two: Cohen's kappa -20/29, 0 agree,
    hand-computed in tests/tasks/test_judged_agreement.py), and one trial whose three integrity judges
    split on one question of two (Fleiss' kappa 1/4, 2/3 agree): the CSV gains judge columns per
    source, the LaTeX table a column each (and it compiles), the JSON a `judge_agreement` /
    `integrity_judge_agreement` object per row and per trial, the report both columns; the same
    campaign judged by one judge each has none of them."""
    monkeypatch.setenv("PTBENCH_TEST_JUDGE_KEY", "sk-test-never-written")
    fleiss = _scored_agreement(tmp_path, ["judge-1", "judge-2", "contrarian"])
    cohen = _scored_agreement(tmp_path, ["judge-1", "contrarian"])
    assert fleiss["judge_kappa"] == pytest.approx(-13 / 36) and cohen["judge_kappa"] == pytest.approx(-20 / 29)
    trials = copy.deepcopy(synthetic.TRIALS)
    extras = {"x__A__gsm8k__s0": fleiss, "x__A__gsm8k__s1": cohen}
    integrity = agreement([["flagged", "clean", "flagged"], ["clean", "clean", "clean"]], 3)
    for r in trials:
        r["extra_metrics"] = extras.get(r["trial_id"], {"judge_calls": 0})
        if r["trial_id"] == "y__A__gsm8k__s0":
            r["integrity_judge_agreement"] = integrity
    cdir = synthetic.write(tmp_path / "results", trials=trials)
    out = tmp_path / "tables"
    run = ptbench("collate", str(cdir), "--out", str(out), "--no-plots", timeout=180)
    assert run.returncode == 0, run.stderr
    kappa, agree = (-13 / 36 - 20 / 29) / 2, (1 / 3 + 0) / 2

    rows = list(csv.DictReader(io.StringIO((out / "results.csv").read_text())))
    assert list(rows[0])[-6:] == [
        "judge_trials",
        "judge_kappa",
        "judge_agreement",
        "integrity_judge_trials",
        "integrity_judge_kappa",
        "integrity_judge_agreement",
    ]
    by = {(r["table"], r["agent"], r["base_model"], r["task"]): r for r in rows}
    for key in [("aggregate", "x", "", "weighted_avg"), ("benchmark", "x", "", "gsm8k")]:
        assert by[key]["judge_trials"] == "2"
        assert float(by[key]["judge_kappa"]) == pytest.approx(kappa, abs=1e-5)
        assert float(by[key]["judge_agreement"]) == pytest.approx(agree, abs=1e-5)
    assert by[("per_base_model", "x", "A", "gsm8k")]["judge_trials"] == "2"
    for key in [("benchmark", "x", "", "aime2025"), ("aggregate", "y", "", "weighted_avg")]:
        assert [by[key][k] for k in ("judge_trials", "judge_kappa", "judge_agreement")] == ["", "", ""]
    assert all(r["judge_trials"] == r["integrity_judge_trials"] == "" for r in rows if r["table"] == "baseline")
    y = by[("aggregate", "y", "", "weighted_avg")]
    assert y["integrity_judge_trials"] == "1" and float(y["integrity_judge_kappa"]) == pytest.approx(0.25)
    assert float(y["integrity_judge_agreement"]) == pytest.approx(2 / 3, abs=1e-5)
    assert by[("aggregate", "x", "", "weighted_avg")]["integrity_judge_trials"] == ""

    data = json.loads((out / "results.json").read_text())
    x = next(a for a in data["aggregate"] if a["agent"] == "x")["judge_agreement"]
    assert x["trials"] == 2 and x["kappa_trials"] == 2 and x["kappa_kinds"] == ["cohen", "fleiss"]
    assert x["kappa"] == pytest.approx(kappa) and x["percent_agreement"] == pytest.approx(agree)
    assert next(a for a in data["aggregate"] if a["agent"] == "y")["judge_agreement"] is None
    cell = next(b for b in data["benchmark"] if (b["agent"], b["task"]) == ("x", "gsm8k"))["judge_agreement"]
    assert cell["trials"] == 2
    per_base = {(b["agent"], b["base_model"], b["task"]): b["judge_agreement"] for b in data["per_base_model"]}
    assert per_base[("x", "A", "gsm8k")]["trials"] == 2 and per_base[("x", "B", "gsm8k")] is None
    judged = {t["trial_id"]: t["judge_agreement"] for t in data["trials"]}
    assert judged["x__A__gsm8k__s0"] == {
        "judges": 3,
        "items": 7,
        "percent_agreement": pytest.approx(1 / 3),
        "kappa": pytest.approx(-13 / 36),
        "kappa_kind": "fleiss",
    }
    assert judged["x__A__gsm8k__s1"]["kappa_kind"] == "cohen" and judged["x__A__gsm8k__s1"]["judges"] == 2
    assert judged["y__A__gsm8k__s0"] is None
    checked = {t["trial_id"]: t["integrity_judge_agreement"] for t in data["trials"]}
    assert checked["y__A__gsm8k__s0"] == integrity and checked["x__A__gsm8k__s0"] is None
    y_agg = next(a for a in data["aggregate"] if a["agent"] == "y")["integrity_judge_agreement"]
    assert y_agg["trials"] == 1 and y_agg["kappa"] == pytest.approx(0.25)

    tex = (out / "results.tex").read_text()
    head = next(line for line in tex.splitlines() if line.startswith("Agent & "))
    assert head.endswith(r"& Weighted avg. & Judge agreement & Integrity judge agreement \\")
    x_row = next(line for line in tex.splitlines() if line.startswith("x & "))
    assert x_row.endswith(r"& $\kappa$ -0.53, 17 \% agree (n=2) &  \\"), x_row
    y_row = next(line for line in tex.splitlines() if line.startswith("y & "))
    assert y_row.endswith(r"&  & $\kappa$ 0.25, 67 \% agree (n=1) \\"), y_row
    assert "Fleiss' kappa" in tex and "κ" not in tex
    md = (out / "results.md").read_text()
    assert "| weighted avg | judge agreement | integrity judge agreement |" in md
    assert "| κ -0.53, 17 % agree (n=2) |  |" in md and "|  | κ 0.25, 67 % agree (n=1) |" in md

    site = tmp_path / "site"
    run = ptbench("report", str(cdir), "--out", str(site), timeout=180)
    assert run.returncode == 0, run.stderr
    index = (site / "index.html").read_text()
    assert "<th>judge agreement</th><th>integrity judge agreement</th>" in index
    assert "<td>κ 0.25, 67 % agree (n=1)</td>" in index  # y's row of the main table
    assert "<td></td><td>κ 0.25 (Fleiss), 67 % agree, 3 judges</td>" in index  # y's trial row
    page = (site / "trials" / "c1__y__A__gsm8k__s0.html").read_text()
    assert "<th>integrity judge agreement</th><td>κ 0.25 (Fleiss), 67 % agree, 3 judges</td>" in page
    assert "<th>judge agreement</th>" not in page

    pdflatex = shutil.which("pdflatex")
    require(pdflatex is not None, "pdflatex missing (bash scripts/install.sh test installs texlive-latex-*)")
    from ptbench.results.latex import document

    (tmp_path / "t.tex").write_text(document(tex))
    compiled = subprocess.run(
        [pdflatex, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "t.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert compiled.returncode == 0, compiled.stdout[-2000:]

    # One judge everywhere: no column, no field.
    plain = synthetic.write(tmp_path / "plain", trials=synthetic.TRIALS)
    run = ptbench("collate", str(plain), "--out", str(tmp_path / "plain-tables"), "--no-plots", timeout=180)
    assert run.returncode == 0, run.stderr
    assert "judge" not in (tmp_path / "plain-tables" / "results.csv").read_text().splitlines()[0]
    assert "judge_agreement" not in (tmp_path / "plain-tables" / "results.json").read_text()
    assert "Judge agreement" not in (tmp_path / "plain-tables" / "results.tex").read_text()
    assert "judge agreement" not in (tmp_path / "plain-tables" / "results.md").read_text()
