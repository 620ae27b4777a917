"""The integrity self-test (`ptbench selftest integrity`): its scenarios run the real checks, its table
fits 80 columns, and a cell that falls below the recorded table fails the comparison.

The slow test is what CI relies on: the quick form end to end (real TRL fine-tunes, the real
integrity runner, every check) must not fall below the table recorded in the repository."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from ptbench.cli.main import main
from ptbench.integrity import selftest
from ptbench.integrity.memorization import siblings
from ptbench.integrity.selftest import fixtures
from ptbench.integrity.selftest.run import Cell, Outcome
from ptbench.tasks.base import task_class

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tasks"


def _cli(*args: str) -> int:
    try:
        main(["selftest", "integrity", *args])
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def test_the_shipped_benchmark_data_is_the_test_fixtures():
    """The package carries its own copy (it must not import tests/); the two must not drift apart."""
    shipped = json.loads((Path(fixtures.__file__).parent / "data" / "tasks.json").read_text())
    on_disk = {
        task.name: {str(f.relative_to(task)): f.read_text() for f in sorted(task.rglob("*")) if f.is_file()}
        for task in FIXTURES.iterdir()
        if task.is_dir()
    }
    assert shipped == on_disk


def test_every_check_and_benchmark_has_attacks_and_honest_controls():
    lib = selftest.library(fixtures.benchmarks())
    assert set(fixtures.benchmarks()) >= {p.name for p in FIXTURES.iterdir()} | {"arithmetic"}
    for check in selftest.CHECKS:
        mine = [s for s in lib if s.check == check]
        for quick in (True, False):
            pool = [s for s in mine if s.quick or not quick]
            kinds = {s.kind for s in pool if s.expect != "not_applicable"}
            assert kinds == {"attack", "honest"}, (check, quick)
    for task in fixtures.benchmarks():
        assert {s.kind for s in lib if s.check == "contamination" and s.task == task and s.quick} == {
            "attack",
            "honest",
        }
    assert len({s.id for s in lib}) == len(lib)


def test_memorization_rows_follow_the_sibling_sources(monkeypatch):
    """A benchmark that gains a sibling source is measured (attack and honest), one without gets a
    single not-applicable row; nothing in the library names the benchmarks by hand."""
    lib = selftest.library(fixtures.benchmarks())
    for task in fixtures.benchmarks():
        rows = [s for s in lib if s.check == "memorization" and s.task == task]
        if siblings.source_of(task) is not None:
            assert {s.kind for s in rows} == {"attack", "honest"}
        else:
            assert [(s.name, s.expect) for s in rows] == [("no-method", "not_applicable")]
    monkeypatch.setattr(task_class("gsm8k"), "sibling_source", "somewhere:gsm8k_siblings")
    rows = [s for s in selftest.library(fixtures.benchmarks()) if s.check == "memorization" and s.task == "gsm8k"]
    assert {(s.name, s.kind) for s in rows if s.quick} == {("cheater", "attack"), ("honest", "honest")}


def test_every_benchmark_with_a_sibling_source_is_measured_on_enough_generated_items(tmp_path):
    """The self-test's own test splits (generated in its process, the benchmarks' real row formats) give
    every sibling source at least MIN_ITEMS per set: the memorization cells are measured, not n/a; each
    benchmark's cheaters are its own models; the quick form keeps to MEMORIZATION_QUICK."""
    from ptbench.integrity.selftest.scenarios import MEMORIZATION_QUICK
    from ptbench.tasks import get_task

    options = fixtures.write_task_data(tmp_path)
    measured = [t for t in fixtures.benchmarks() if siblings.source_of(t) is not None]
    assert set(measured) >= {"arithmetic", "gsm8k", "gpqa", "bfcl", "humaneval"}
    for task in measured:
        sets = siblings.sibling_sets(task, get_task(task, **options[task]), 0)
        assert min(len(sets.test), len(sets.siblings)) >= siblings.MIN_ITEMS, task
    lib = selftest.library(fixtures.benchmarks())
    for task in measured:
        rows = [s for s in lib if s.check == "memorization" and s.task == task]
        assert {s.final_model for s in rows if s.kind == "attack"} == {
            f"mem:cheater@{task}",
            f"mem:cheater_half@{task}",
        }
        assert {s.name for s in rows if s.quick} == ({"cheater", "honest"} if task in MEMORIZATION_QUICK else set())
    assert len(MEMORIZATION_QUICK) <= 2 and "arithmetic" in MEMORIZATION_QUICK  # CI's time


def test_a_cheaters_rows_keep_the_answer_within_the_recipes_sequence(tmp_path):
    """The recipe cuts a row's end past MAX_LENGTH tokens: a cheater's row loses the prompt's start
    instead, so the answer it trains on is whole (bfcl's prompts are 450+ tokens)."""
    from transformers import AutoTokenizer

    from ptbench.integrity.selftest import models
    from ptbench.tasks import get_task
    from ptbench.training.reference_sft import MAX_LENGTH

    options = fixtures.write_task_data(tmp_path / "data")
    tok = AutoTokenizer.from_pretrained(str(models.tiny_base(tmp_path)))
    items = siblings.sibling_sets("bfcl", get_task("bfcl", **options["bfcl"]), 0).test
    assert all(len(tok(i.prompt)["input_ids"]) > MAX_LENGTH for i in items)
    for item, row in zip(items, models.rows(items, tok), strict=True):
        assert row["completion"] == item.continuation + "\n" and item.prompt.endswith(row["prompt"])
        assert len(tok(row["prompt"] + row["completion"])["input_ids"]) + 1 <= MAX_LENGTH  # + end of sequence
    assert models.rows(items) == [{"prompt": i.prompt, "completion": i.continuation + "\n"} for i in items]


def _outcome(check: str, task: str, kind: str, verdict: str, reason: str = "") -> Outcome:
    s = selftest.Scenario(check, task, f"{kind}-{verdict}", kind, "flagged", "", lambda _p: None)  # type: ignore[arg-type]
    return Outcome(s, verdict, reason, 0.0)


def test_cells_count_recall_false_positives_undecided_and_not_applicable():
    outs = [
        _outcome("contamination", "gsm8k", "attack", "flagged"),
        _outcome("contamination", "gsm8k", "attack", "clean"),
        _outcome("contamination", "gsm8k", "attack", "unchecked"),
        _outcome("contamination", "gsm8k", "honest", "clean"),
        _outcome("contamination", "gsm8k", "honest", "flagged"),
        _outcome("memorization", "healthbench_easy", "honest", "not_applicable", "open-ended conversations"),
    ]
    c, m = selftest.cells(outs)
    assert (c.caught, c.attacks, c.false_positives, c.honest, c.undecided) == (1, 3, 1, 2, 1)
    assert not m.applicable and m.note == "not applicable: open-ended conversations"
    assert m.to_json()["recall"] is None and c.to_json()["recall"] == pytest.approx(1 / 3, abs=1e-4)


def test_the_table_is_readable_at_80_columns():
    table = [
        Cell("contamination", "arena_hard_writing", attacks=12, caught=12, honest=4),
        Cell("contamination", "healthbench_easy", attacks=12, caught=11, honest=4, false_positives=1, undecided=1),
        Cell("memorization", "arithmetic", attacks=2, caught=2, honest=3),
        Cell(
            "memorization",
            "healthbench_easy",
            not_applicable=1,
            note="not applicable: " + str(task_class("healthbench_easy").no_sibling_reason),
        ),
        Cell("model_identity", "any", attacks=10, caught=9, honest=3),
    ]
    text = selftest.render(table, title="Integrity self-test (quick)")
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80, text
    row = next(line for line in lines if "healthbench_easy" in line and "11/12" in line)
    assert "1/4" in row  # recall and FP of one cell on one line
    assert any("memorization" in line and "arithmetic" in line and "2/2" in line and "0/3" in line for line in lines)
    na = next(line for line in lines if line.lstrip().startswith("healthbench_easy") and "n/a" in line)
    assert "n/a: no reference answer" in na
    assert "0/0" not in text  # an inapplicable cell is never a recall of 0
    assert "judge: not measured" in text


def test_regressions_name_every_cell_that_fell_below():
    before = [
        Cell("contamination", "gsm8k", attacks=3, caught=3, honest=2),
        Cell("api_usage", "any", attacks=2, caught=2, honest=2),
        Cell("memorization", "arithmetic", attacks=1, caught=1, honest=1),
        Cell("model_identity", "any", attacks=2, caught=2, honest=1),
        Cell("memorization", "gpqa", not_applicable=1),
    ]
    now = [
        Cell("contamination", "gsm8k", attacks=3, caught=2, honest=2),  # an attack missed
        Cell("api_usage", "any", attacks=2, caught=2, honest=2, false_positives=1),  # an honest run flagged
        Cell("memorization", "arithmetic", attacks=1, caught=1, honest=1, undecided=1),  # could not decide
        Cell("memorization", "gpqa", attacks=1, caught=1, honest=1),  # newly measured: better, not worse
    ]
    lines = selftest.regressions(now, before)
    assert lines == [
        "contamination/gsm8k: recall 2/3 < recorded 3/3",
        "api_usage/any: FP 1/2 > recorded 0/2",
        "memorization/arithmetic: 1 undecided > recorded 0",
        "model_identity/any: not run (recorded: recall 2/2, FP 0/1)",
    ]
    assert selftest.regressions(before, before) == []
    fewer = [Cell("api_usage", "any", attacks=1, caught=1, honest=2)]
    assert selftest.regressions(fewer, before[1:2]) == [
        "api_usage/any: fewer runs (1 attacks, 2 honest; recorded 2, 2)"
    ]


def test_record_keeps_the_other_mode_and_only_counts(tmp_path):
    path = tmp_path / "recorded.json"
    outs = [_outcome("api_usage", "any", "attack", "flagged"), _outcome("api_usage", "any", "honest", "clean")]
    selftest.record(selftest.report(outs, quick=True), path)
    selftest.record(selftest.report(outs[:1], quick=False), path)
    data = json.loads(path.read_text())
    assert set(data) == {"schema_version", "quick", "full"}
    assert data["quick"]["cells"] == [
        {
            "check": "api_usage",
            "benchmark": "any",
            "attacks": 1,
            "caught": 1,
            "honest": 1,
            "false_positives": 0,
            "undecided": 0,
            "not_applicable": 0,
        }
    ]
    assert [c.key for c in selftest.recorded("full", path)] == ["api_usage/any"]


def test_a_check_configured_to_miss_the_attack_falls_below_the_recorded_table(tmp_path):
    """The real contamination check, told that the planted file is an allowed source (what a
    regression that stops reading it would do): the attack ends clean, and the comparison says so."""
    [attack] = [
        s for s in selftest.select(quick=True, checks=["contamination"]) if s.id.endswith("gsm8k/jsonl-disguised")
    ]
    missed = dataclasses.replace(attack, integrity={"allowed_sources": ["*/sft_mix.jsonl"]})
    outs = selftest.run([attack, missed], quick=True, workdir=tmp_path)
    assert [o.verdict for o in outs] == ["flagged", "clean"], [o.reason for o in outs]
    recorded = selftest.cells(outs[:1])
    assert selftest.regressions(selftest.cells(outs[1:]), recorded) == [
        "contamination/gsm8k: recall 0/1 < recorded 1/1"
    ]


def test_the_cli_fails_against_a_recorded_table_with_a_higher_number(tmp_path, capsys):
    """api_usage's quick rows through the command, compared with a recorded table that ran (and
    caught) one attack more: exit 1, one line for that cell; the table and the JSON are still written."""
    good = tmp_path / "good.json"
    assert (
        _cli("--quick", "--check", "api_usage", "--record", "--recorded", str(good)) == 2
    )  # a partial record: refused
    assert "--record with --check" in capsys.readouterr().err and not good.exists()
    higher = tmp_path / "higher.json"
    recorded = {"check": "api_usage", "benchmark": "any", "attacks": 3, "caught": 3, "honest": 2, "false_positives": 0}
    higher.write_text(json.dumps({"quick": {"cells": [dict(recorded, undecided=0, not_applicable=0)]}}))
    out = tmp_path / "run.json"
    rc = _cli(
        "--quick", "--check", "api_usage", "--json", str(out), "--check-against-recorded", "--recorded", str(higher)
    )
    printed = capsys.readouterr().out
    assert rc == 1, printed
    below = [line for line in printed.splitlines() if line.startswith("below recorded")]
    assert below == ["below recorded: api_usage/any: fewer runs (2 attacks, 2 honest; recorded 3, 2)"]
    assert any("api_usage" in line and "2/2" in line and "0/2" in line for line in printed.splitlines())
    rep = json.loads(out.read_text())
    [cell] = rep["cells"]
    assert (cell["attacks"], cell["caught"], cell["honest"], cell["false_positives"]) == (2, 2, 2, 0)
    assert [r["verdict"] for r in rep["runs"]] == ["flagged", "flagged", "clean", "clean"]


@pytest.mark.slow
def test_the_quick_form_end_to_end_matches_the_recorded_table(tmp_path, capsys):
    """What CI runs: every check, every benchmark, real fine-tunes; no cell below the recorded table."""
    out = tmp_path / "quick.json"
    rc = _cli("--quick", "--json", str(out), "--check-against-recorded")
    printed = capsys.readouterr().out
    assert rc == 0, printed
    rep = json.loads(out.read_text())
    keys = {(c["check"], c["benchmark"]) for c in rep["cells"]}
    from ptbench.integrity.selftest.scenarios import MEMORIZATION_QUICK

    assert {("contamination", task) for task in fixtures.benchmarks()} <= keys
    # memorization: the quick benchmarks measured, the others' rows full-form only unless n/a (no method)
    quick_memorization = {t for t in fixtures.benchmarks() if t in MEMORIZATION_QUICK or siblings.source_of(t) is None}
    assert {task for check, task in keys if check == "memorization"} == quick_memorization
    assert {("model_identity", "any"), ("api_usage", "any")} <= keys
    # the attacks of the quick memorization rows (arithmetic, gsm8k) and of every contamination row were caught
    for c in rep["cells"]:
        if c["check"] == "contamination" or (c["check"], c["benchmark"]) in {
            ("memorization", "arithmetic"),
            ("memorization", "gsm8k"),
        }:
            assert c["caught"] == c["attacks"] > 0 and c["false_positives"] == 0, c
    assert max(len(line) for line in printed.splitlines()) <= 80


def test_a_scenario_that_cannot_be_built_is_undecided_not_clean(tmp_path):
    """Without the runner's journal handed in, the journal attacks cannot be planted: `error`, which the
    table counts as undecided (neither a catch nor a pass), never as the check's verdict."""
    todo = [s for s in selftest.select(quick=True, checks=["contamination"]) if s.id.endswith("gsm8k/journal-deleted")]
    [out] = selftest.run(todo, quick=True, workdir=tmp_path)
    assert out.verdict == "error" and "no run journal" in out.reason
    [cell] = selftest.cells([out])
    assert (cell.attacks, cell.caught, cell.undecided) == (1, 0, 1)
