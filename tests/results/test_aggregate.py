"""The aggregate of a synthetic campaign under each scoring policy, against numbers computed by hand.

Weights from the baselines: gsm8k 1/(0.85 − 0.25) = 1/0.6, aime2025 1/(0.35 − 0.05) = 1/0.3, so
normalised gsm8k 1/3 and aime2025 2/3. Base zero-shot: A gsm8k .20 aime .00; B gsm8k .30 aime .10.
"""

from __future__ import annotations

import json
import math
import statistics

import pytest

from ptbench.core.errors import UserError
from ptbench.results.aggregate import collate
from ptbench.results.collate import collate_dirs, load
from ptbench.results.schema import ResultRecord
from ptbench.results.weights import from_baselines, preset
from tests.results import synthetic

W_GSM, W_AIME = 1 / 3, 2 / 3


def records(trials=synthetic.TRIALS, baselines=synthetic.BASELINES):
    return [ResultRecord.model_validate(r) for r in trials + baselines]


def test_base_fallback_by_hand():
    c = collate(records(), "base_fallback")
    # seed 0: gsm8k (A .50 + B no_model -> .30)/2 = .40; aime (A .20 + B flagged -> .10)/2 = .15
    # seed 1: gsm8k (A .60 + B unchecked -> .30)/2 = .45; aime (A failed -> .00 + B .40)/2 = .20
    runs = [W_GSM * 0.40 + W_AIME * 0.15, W_GSM * 0.45 + W_AIME * 0.20]
    agg = c.aggregate["x"]
    assert agg.values == pytest.approx(runs)
    assert agg.mean == pytest.approx(statistics.fmean(runs)) and agg.std == pytest.approx(statistics.stdev(runs))
    assert c.per_benchmark[("x", "gsm8k")].values == pytest.approx([0.40, 0.45])
    assert dict(c.per_benchmark[("x", "gsm8k")].rules) == {"scored": 2, "base_fallback": 2}
    assert c.per_base[("x", "B", "gsm8k")].values == pytest.approx([0.30, 0.30])
    reasons = {why for (rule, why) in c.reasons if rule == "base_fallback"}
    assert reasons == {"no_model", "flagged", "unchecked", "agent_failed"}
    # y's cancelled trial on base C has no baseline: nan, never silently dropped
    assert math.isnan(c.per_benchmark[("y", "gsm8k")].mean) and math.isnan(c.aggregate["y"].mean)
    assert c.rule_totals == {"scored": 7, "base_fallback": 4, "no_baseline": 1}


def test_exclude_by_hand():
    c = collate(records(), "exclude")
    # seed 0: gsm8k A .50; aime A .20. seed 1: gsm8k A .60; aime B .40
    runs = [W_GSM * 0.50 + W_AIME * 0.20, W_GSM * 0.60 + W_AIME * 0.40]
    assert c.aggregate["x"].values == pytest.approx(runs)
    # y: gsm8k A .10 (C excluded); aime (A .00 + C .05)/2
    assert c.aggregate["y"].values == pytest.approx([W_GSM * 0.10 + W_AIME * 0.025])
    assert c.rule_totals == {"scored": 7, "excluded": 5}


def test_nan_policy_makes_every_touched_number_nan():
    c = collate(records(), "nan")
    assert all(math.isnan(v) for v in c.aggregate["x"].values) and c.aggregate["x"].n == 2
    assert c.per_base[("x", "A", "gsm8k")].values == pytest.approx([0.50, 0.60])  # untouched cells stay numbers
    assert c.rule_totals == {"scored": 7, "nan": 5}


def test_integrity_policy_governs_only_integrity_problems():
    c = collate(records(), "base_fallback", integrity_policy="exclude")
    assert dict(c.per_benchmark[("x", "gsm8k")].rules) == {"scored": 2, "base_fallback": 1, "excluded": 1}
    # seed 1 gsm8k: A .60, B unchecked -> excluded => .60
    assert c.per_benchmark[("x", "gsm8k")].values == pytest.approx([0.40, 0.60])


def test_a_run_missing_a_benchmark_is_counted_not_hidden():
    trials = [
        r
        for r in synthetic.TRIALS
        if not (r["agent"]["label"] == "x" and r["task"]["name"] == "aime2025" and r["seed"] == 1)
    ]
    c = collate(records(trials), "base_fallback")
    assert c.aggregate["x"].n == 1 and c.aggregate["x"].incomplete == 1
    assert any("incomplete" in n for n in c.notes)


def test_baseline_rows_and_weights_from_baselines_equal_the_formula():
    recs = records()
    w = from_baselines(recs, ["aime2025", "gsm8k"])
    gaps = {"gsm8k": (0.80 + 0.90) / 2 - (0.20 + 0.30) / 2, "aime2025": (0.30 + 0.40) / 2 - (0.00 + 0.10) / 2}
    inv = {t: 1 / g for t, g in gaps.items()}
    assert w == pytest.approx({t: v / sum(inv.values()) for t, v in inv.items()})
    c = collate(recs, "base_fallback")
    assert c.settings == ["base (zero-shot)", "base (5-shot)", "instruct"]
    assert c.baselines[("instruct", "gsm8k")].mean == pytest.approx(0.85)
    assert c.baseline_aggregate["base (zero-shot)"] == pytest.approx(W_GSM * 0.25 + W_AIME * 0.05)
    assert "base (5-shot)" not in c.baseline_aggregate  # no 5-shot aime: no weighted number


def test_instruct_not_above_base_is_a_clear_error():
    bad = [
        dict(b, primary_metric={**b["primary_metric"], "value": 0.0})
        if b["agent"]["name"] == "baseline-instruct"
        else b
        for b in synthetic.BASELINES
    ]
    with pytest.raises(UserError, match=r"undefined for .*instruct"):
        collate(records(baselines=bad), "base_fallback")


def test_ptb_preset_equals_the_published_weights():
    shipped = preset("ptb")
    expected = {
        "aime2025": 0.2265,
        "arena_hard_writing": 0.0904,
        "bfcl": 0.0746,
        "gpqa": 0.2246,
        "gsm8k": 0.0936,
        "healthbench_easy": 0.1841,
        "humaneval": 0.1061,
    }  # the reference's published weights (posttrain-benchmark.md)
    assert shipped == pytest.approx(expected, abs=5e-5)
    assert sum(shipped.values()) == pytest.approx(1.0, abs=1e-6)


def test_given_weights_file_renormalises_and_refuses_a_missing_task(tmp_path):
    f = tmp_path / "w.json"
    f.write_text(json.dumps({"gsm8k": 1, "aime2025": 3, "other": 5}))
    c = collate(records(), "exclude", weights=str(f))
    assert c.weights.by_task == pytest.approx({"gsm8k": 0.25, "aime2025": 0.75}) and "other" in c.weights.source
    f.write_text(json.dumps({"gsm8k": 1}))
    with pytest.raises(UserError, match="no weight for aime2025"):
        collate(records(), "exclude", weights=str(f))


def test_policy_comes_from_the_campaign_snapshot_and_merging_refuses_mixed_settings(tmp_path):
    cdir = synthetic.write(tmp_path / "results", policy="exclude")
    assert collate_dirs([cdir]).collation.policy == "exclude"
    assert collate_dirs([cdir], policy="nan").collation.policy == "nan"
    other = [
        dict(r, campaign="c2", evaluation={"limit": 50, "generation": {"max_new_tokens": 100}})
        for r in synthetic.TRIALS[:1]
    ]
    c2 = synthetic.write(tmp_path / "results", other, [], policy="exclude", campaign="c2")
    with pytest.raises(UserError, match=r"column 'gsm8k': limit differs.*--allow-mixed"):
        collate_dirs([cdir, c2])
    merged = collate_dirs([cdir, c2], allow_mixed=True)
    assert any("mixed evaluation" in w for w in merged.warnings)
    assert any("appears 2 times (campaigns c1, c2)" in w for w in merged.warnings)  # same trial in both campaigns
    assert merged.collation.per_base[("x", "A", "gsm8k")].values == pytest.approx(
        [0.50, 0.60]
    )  # duplicates averaged per run


def test_conflicting_labels_warn_and_policies_must_agree(tmp_path):
    cdir = synthetic.write(tmp_path / "results", policy="exclude")
    clash = [dict(synthetic.record("x", "A", "gsm8k", 5, 0.5, campaign="c2"), agent={"name": "codex", "label": "x"})]
    c2 = synthetic.write(tmp_path / "results", clash, [], policy="nan", campaign="c2")
    with pytest.raises(UserError, match="different scoring policies"):
        collate_dirs([cdir, c2])
    result = collate_dirs([cdir, c2], policy="exclude")
    assert any("agent label 'x' names different things" in w for w in result.warnings)
    assert load([cdir]).campaign_specs["c1"]["scoring"]["policy"] == "exclude"


def test_a_result_json_an_agent_writes_in_its_workspace_is_not_a_trial(tmp_path):
    cdir = synthetic.write(tmp_path / "results")
    trial = cdir / "x__A__gsm8k__s0"
    (trial / "trial.json").write_text("{}")
    forged = synthetic.record("x", "A", "gsm8k", 7, 1.0)
    for where in (trial / "workspace" / "out", trial / "final_model"):
        where.mkdir(parents=True)
        (where / "result.json").write_text(json.dumps(forged))
    loaded = load([cdir])
    assert sorted(
        r.seed for r in loaded.records if r.agent.label == "x" and r.task.name == "gsm8k" and r.base_model.label == "A"
    ) == [0, 1]
    pending = cdir / "x__A__aime2025__s9"  # planned, still running: its workspace is not searched either
    (pending / "workspace").mkdir(parents=True)
    (pending / "trial.json").write_text("{}")
    (pending / "workspace" / "result.json").write_text(json.dumps(forged))
    assert all(r.seed != 7 for r in load([cdir]).records)


def test_integrity_policy_show_keeps_the_score_marked(tmp_path):
    c = collate(records(), "base_fallback", integrity_policy="show")
    assert c.per_benchmark[("x", "gsm8k")].values == pytest.approx([0.40, (0.60 + 0.70) / 2])
    assert dict(c.per_benchmark[("x", "gsm8k")].rules) == {"scored": 2, "shown": 1, "base_fallback": 1}
    cdir = synthetic.write(tmp_path / "results")
    snapshot = json.loads((cdir / "campaign.json").read_text())
    snapshot["spec"]["integrity"] = {"policy": "show"}
    (cdir / "campaign.json").write_text(json.dumps(snapshot))
    assert collate_dirs([cdir]).collation.integrity_policy == "show"
    snapshot["spec"]["scoring"] = {"policy": "show"}  # show is for integrity only: a failed trial has no score to show
    (cdir / "campaign.json").write_text(json.dumps(snapshot))
    with pytest.raises(UserError, match="scoring.policy: unknown scoring policy 'show'"):
        collate_dirs([cdir])


def test_cost_prefers_the_gateway_call_log(tmp_path):
    cdir = synthetic.write(tmp_path / "results")
    agent_dir = cdir / "y__A__gsm8k__s0" / "agent"
    agent_dir.mkdir()
    (agent_dir / "calls.jsonl").write_text(
        "\n".join(json.dumps({"usage": {"input_tokens": 7, "output_tokens": 1, "cost_usd": 0.25}}) for _ in range(4))
        + "\n"
    )
    y = next(row for row in collate_dirs([cdir]).costs if row.agent == "y")
    # three trials from usage.json (1000 in, 100 out, $0.5 each) + the gateway's 4 calls (28 in, 4 out, $1)
    assert (y.input_tokens, y.output_tokens, y.cost_usd) == (3 * 1000 + 28, 3 * 100 + 4, pytest.approx(3 * 0.5 + 1.0))
    assert y.failures == {"cancelled": 1} and y.continuations == 4 and y.hours_used == pytest.approx(2.0)
