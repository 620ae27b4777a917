"""The "judge agreement" column: per agent in the Markdown table and the report's index (mean over
the agent's trials with several judges), per trial in the index's trial table and the trial page;
absent when no trial had several judges."""

from __future__ import annotations

import copy

from ptbench.results.aggregate import collate
from ptbench.results.schema import ResultRecord
from ptbench.results.tables import to_markdown
from tests.conftest import ptbench
from tests.results import synthetic

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
    import pytest

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
