"""Aggregation arithmetic and the table formats, on records built through the real schema.

Since the scoring policy (issue 13), a trial without a score follows the policy instead of being
silently left out: these tests pick `exclude` to keep the arithmetic of the original tests, and mark
every trial's integrity clean (a trial no check cleared follows the policy too)."""

from __future__ import annotations

import csv
import io
import json
import statistics

import pytest

from ptbench.results.aggregate import collate
from ptbench.results.collate import load_records
from ptbench.results.latex import to_latex
from ptbench.results.schema import ResultRecord
from ptbench.results.tables import to_csv, to_markdown


def record(
    agent: str, task: str, seed: int, value: float | None, status: str = "completed", base: str = "tiny"
) -> dict:
    return {
        "campaign": "c",
        "trial_id": f"{agent}__{base}__{task}__s{seed}",
        "agent": {"name": agent, "label": agent},
        "base_model": {"id": f"x/{base}", "label": base},
        "task": {"name": task, "label": task},
        "seed": seed,
        "status": status,
        "budget": {"hours": 1, "gpus": 0},
        "finished_at": 0,
        "primary_metric": None if value is None else {"name": "accuracy", "value": value, "stderr": 0.01, "n": 100},
        "provenance": {"ptbench_version": "0", "host": "h", "scheduler": "local"},
        "integrity": {"contamination": "clean"},
    }


@pytest.fixture
def results_dir(tmp_path):
    rows = [
        record("ref", "gsm8k", 0, 0.50),
        record("ref", "gsm8k", 1, 0.60),
        record("ref", "gsm8k", 2, 0.70),
        record("ref", "aime", 0, 0.10),
        record("ref", "aime", 1, None, status="no_model"),
        record("base", "gsm8k", 0, 0.20),
        record("base", "aime", 0, 0.00),
    ]
    for r in rows:
        d = tmp_path / r["trial_id"]
        d.mkdir()
        (d / "result.json").write_text(json.dumps(r))
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "result.json").write_text('{"status": "completed"}')
    return tmp_path


def test_mean_std_n_and_unscored(results_dir):
    records, problems = load_records(results_dir)
    assert len(records) == 7 and len(problems) == 1 and "broken/result.json" in problems[0]
    table = collate(records, "exclude", weights="equal")
    cell = table.per_benchmark[("ref", "gsm8k")]
    assert cell.mean == pytest.approx(0.6)
    assert cell.std == pytest.approx(statistics.stdev([0.5, 0.6, 0.7]))
    assert cell.n == 3
    assert table.per_benchmark[("ref", "aime")].rules["excluded"] == 1
    md = to_markdown(table)
    assert "| ref | 10.0 ± 0.0 (n=1) ‡1 | 60.0 ± 10.0 (n=3) |" in md
    assert "| agent | aime | gsm8k | weighted avg |" in md.splitlines()


def test_latex_is_booktabs_and_csv_is_long(results_dir):
    table = collate(load_records(results_dir)[0], "exclude", weights="equal")
    tex = to_latex(table)
    assert "\\begin{tabular}{lccc}" in tex and "\\toprule" in tex and "\\bottomrule" in tex
    assert "ref & 10.0 $\\pm$ 0.0 (1)\\textsuperscript{\\ddag1} & 60.0 $\\pm$ 10.0 (3) &" in tex
    rows = list(csv.DictReader(io.StringIO(to_csv(table))))
    ref_gsm = next(r for r in rows if r["table"] == "benchmark" and r["agent"] == "ref" and r["task"] == "gsm8k")
    assert ref_gsm["n"] == "3" and float(ref_gsm["mean"]) == pytest.approx(0.6) and ref_gsm["values"] == "0.5 0.6 0.7"


def test_several_base_models_split_rows(tmp_path):
    for r in (record("ref", "gsm8k", 0, 0.5, base="a"), record("ref", "gsm8k", 0, 0.7, base="b")):
        d = tmp_path / r["trial_id"]
        d.mkdir()
        (d / "result.json").write_text(json.dumps(r))
    table = collate(load_records(tmp_path)[0], "exclude", weights="equal")
    assert sorted(b for (_, b, _) in table.per_base) == ["a", "b"]
    assert table.per_benchmark[("ref", "gsm8k")].values == pytest.approx([0.6])  # mean over base models first


def test_schema_round_trip_is_versioned():
    r = ResultRecord.model_validate(record("ref", "gsm8k", 0, 0.5))
    assert r.schema_version == 1
    assert ResultRecord.model_validate_json(r.model_dump_json()) == r


def test_collate_command_writes_every_format_and_a_chart(results_dir, tmp_path):
    from tests.conftest import ptbench

    out = tmp_path / "tables"
    run = ptbench("collate", str(results_dir), "--out", str(out), "--policy", "exclude")
    assert run.returncode == 0, run.stderr
    assert "warning:" in run.stderr and "broken/result.json" in run.stderr  # invalid records are reported
    assert "| ref |" in run.stdout
    for name in ("results.md", "results.csv", "results.tex", "results.json", "cost.csv"):
        assert (out / name).stat().st_size > 0
    png = (out / "benchmarks.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
