"""Memorization's sibling sources for BFCL (the argument values the question writes drawn anew) and
GPQA (options in another order), and AIME 2025's reason for having none.

Unit tests on the fixtures and on hostile rows (enum members and values the question does not
write, calls the task's parser reads otherwise, duplicate options); then the real
check end to end (slow): real TRL fine-tunes of a smaller tiny Llama made here (64 wide, 2 layers,
a short context), an honest one on in-domain items that are not test items and a cheater trained in
memory on the test items (no file with a test item is written), scored through the real integrity
runner: the cheater `flagged`, the honest run `clean`. The test splits are written here in the
tasks' real row formats, 40 items each (the fixtures have 3), by the calibration script's generators
(scripts/bench_memorization_mcq.py).
"""

from __future__ import annotations

import importlib.util
import json
import random
import re
import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest

from ptbench.integrity import run_checks
from ptbench.integrity.memorization import bfcl_siblings, gpqa_siblings
from ptbench.integrity.memorization.siblings import not_applicable_reason, sibling_sets
from ptbench.integrity.report import NotApplicable
from ptbench.tasks import get_task
from ptbench.tasks.base import task_class
from ptbench.tasks.bfcl import parse_call

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "tasks"
CHECK = {"checks": ["memorization"]}


def _bench():
    """The calibration script as a module (its row generators and in-memory fine-tunes)."""
    spec = importlib.util.spec_from_file_location(
        "bench_memorization_mcq", REPO / "scripts" / "bench_memorization_mcq.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_memorization_mcq", module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def test_files(tmp_path_factory) -> dict[str, Path]:
    bench = _bench()
    root = tmp_path_factory.mktemp("mcq-data")
    return {task: bench.write_test_file(task, 40, root / task) for task in ("bfcl", "gpqa")}


def _row(name="get_weather", params=None, question="Weather in Oslo?", gt="get_weather(city='Oslo')", **extra):
    params = params if params is not None else {"city": {"type": "string", "description": "City name."}}
    schema = {"name": name, "description": "A function.", "parameters": {"type": "dict", "properties": params}}
    schema["parameters"]["required"] = extra.pop("required", list(params)[:1])
    return {
        "id": "exec_simple_x",
        "question": [[{"role": "user", "content": question}]],
        "function": extra.pop("functions", [schema]),
        "execution_result_type": ["exact_match"],
        "ground_truth": [gt],
        **extra,
    }


def _parsed_matches_schema(row: dict) -> tuple[str, dict]:
    """The row's expected call as the task's parser reads it, checked against the row's schema."""
    names = [f["name"] for f in row["function"]]
    call = parse_call(row["ground_truth"][0], names)
    assert call is not None and call[0] in names, row["ground_truth"]
    schema = next(f for f in row["function"] if f["name"] == call[0])["parameters"]
    assert set(call[1]) <= set(schema["properties"]) and set(schema.get("required", [])) <= set(call[1])
    return call


# ---- BFCL ----


def _reinstanced(row: dict, seed: int, rows: list[dict] | None = None) -> tuple[dict, dict] | str:
    return bfcl_siblings.reinstance_item(row, random.Random(seed), bfcl_siblings.value_pools(rows or [row]))


def test_bfcl_rows_are_reinstanced_with_new_values_in_question_and_call_alike(test_files):
    """Names and schema unchanged; each value the question writes replaced by one map in the question
    and the expected call, which the task's parser reads as the same function with the new values."""
    rows = [json.loads(line) for line in test_files["bfcl"].read_text().splitlines()]
    for row in rows:
        for seed in range(5):
            out = _reinstanced(row, seed, rows)
            assert not isinstance(out, str), (row["ground_truth"], out)
            new, mapping = out
            assert new["function"] == row["function"] and mapping
            name, args = _parsed_matches_schema(row)
            new_name, new_args = _parsed_matches_schema(new)
            assert new_name == name and set(new_args) == set(args) and new_args != args
            question, new_question = row["question"][0][0]["content"], new["question"][0][0]["content"]
            for k, v in args.items():
                if new_args[k] != v:  # a changed value left the question with the call, and the new one came in
                    text = repr(new_args[k]) if isinstance(v, float) else str(new_args[k])
                    assert text.rstrip("0").rstrip(".") in new_question and type(new_args[k]) is type(v)
                    assert str(v) not in re.sub(r"\d+(\.\d+)?", lambda m: m.group() + " ", new_question).split()
                else:  # kept: the question does not write it (or nothing of its kind to draw)
                    assert str(v) in question or isinstance(v, str)


def test_bfcl_numbers_and_strings_are_drawn_from_the_splits_own_values():
    rows = [
        _row(
            "get_weather",
            {"city": {"type": "string"}, "days": {"type": "integer"}},
            f"Weather in {city} for {days} days?",
            f"get_weather(city='{city}', days={days})",
        )
        for city, days in (("Oslo", 12), ("Lima", 15), ("Quito", 14), ("Perth", 11))
    ]
    seen = set()
    for seed in range(30):
        new, mapping = _reinstanced(rows[0], seed, rows)  # type: ignore[misc]
        assert new["ground_truth"][0] == f"get_weather(city='{mapping['Oslo']}', days={mapping['12']})"
        assert new["question"][0][0]["content"] == f"Weather in {mapping['Oslo']} for {mapping['12']} days?"
        assert mapping["Oslo"] in {"Lima", "Quito", "Perth"} and mapping["12"] in {"15", "14", "11"}
        seen.add((mapping["Oslo"], mapping["12"]))
    assert len(seen) > 3  # drawn with the secret stream, not fixed


def test_bfcl_a_string_the_schema_names_and_a_value_the_question_does_not_write_are_kept():
    params = {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "kelvin"]}}
    rows = [
        _row("get_weather", params, f"Weather in {c} in celsius?", f"get_weather(city='{c}', unit='celsius', days=3)")
        for c in ("Oslo", "Lima")
    ]
    for row in rows:
        row["function"][0]["parameters"]["properties"]["days"] = {"type": "integer"}
    new, mapping = _reinstanced(rows[0], 0, rows)  # type: ignore[misc]
    assert mapping == {"Oslo": "Lima"}  # 'celsius' is an enum member; 3 is not in the question
    assert new["ground_truth"] == ["get_weather(city='Lima', unit='celsius', days=3)"]


def test_bfcl_sets_are_the_evaluations_prompts_and_drawn_with_the_secret(test_files):
    from ptbench.tasks.bfcl import BFCL

    task = get_task("bfcl", data_path=str(test_files["bfcl"]))
    sets = sibling_sets("bfcl", task, 0, 5)
    assert len(sets.test) == len(sets.siblings) == 40 and sets.details["items_skipped"] == {}
    evaluated = BFCL(data_path=str(test_files["bfcl"]), prompt_format="base", allow_unisolated=True).test_examples()
    # the evaluation's prompt and reference, the call's name and '(' moved from the reference to the prompt
    assert [(i.id, i.prompt + i.continuation) for i in sets.test] == [(e.id, e.prompt + e.reference) for e in evaluated]
    for item, sib, e in zip(sets.test, sets.siblings, evaluated, strict=True):
        name = e.reference.split("(")[0] + "("
        assert item.prompt == e.prompt + name and sib.prompt.endswith(name)
        assert sib.id == item.id + " (values)" and sib.continuation != item.continuation
    again, other = sibling_sets("bfcl", task, 0, 5), sibling_sets("bfcl", task, 0, 6)
    assert again.siblings == sets.siblings  # the campaign's secret gives every trial the same siblings
    assert [i.continuation for i in other.siblings] != [i.continuation for i in sets.siblings]
    fresh = [sibling_sets("bfcl", task, 0).siblings for _ in range(2)]  # no secret: drawn afresh per run
    assert fresh[0] != fresh[1]


def test_bfcl_the_fixture_alone_is_too_small_and_not_applicable():
    with pytest.raises(NotApplicable, match="too small"):
        sibling_sets("bfcl", get_task("bfcl", data_path=str(FIXTURES / "bfcl")), 0, 1)


@pytest.mark.parametrize(
    ("row", "reason"),
    [
        (_row(gt="get_weather('Oslo')"), "keyword literals"),  # positional
        (_row(gt="math.factorial(n=5)"), "keyword literals"),  # an attribute, not a name
        (_row(gt="get_weather(city=x)"), "keyword literals"),  # not a literal
        (_row(gt="get_weather(city='Oslo'); get_weather(city='Lima')"), "keyword literals"),
        (_row(gt="get_time(city='Oslo')"), "does not match its schema"),  # not the item's function
        (_row(gt="get_weather(town='Oslo')"), "does not match its schema"),  # not its parameter
        (
            _row(
                params={"city": {"type": "dict", "description": "c"}},
                gt='get_weather(city={"name": "Oslo", "arguments": {}})',
            ),
            "does not parse as itself",  # the task's parser reads the JSON object as a call of 'Oslo'
        ),
        (_row(functions=[_row()["function"][0]] * 2), "share a name"),
        (_row(name="get", gt="get(city='Oslo')", params={"city": {"type": "string"}}, functions=[]), "no function"),
        (_row(question="Weather here?"), "no argument value written in the question"),
    ],
)
def test_bfcl_items_that_cannot_be_reinstanced_safely_are_skipped_with_the_reason(row, reason):
    out = bfcl_siblings.reinstance_item(
        row,
        random.Random(0),
        bfcl_siblings.value_pools([row, _row(question="Weather in Lima?", gt="get_weather(city='Lima')")]),
    )
    assert isinstance(out, str) and reason in out, out


def test_bfcl_skipped_items_are_counted(tmp_path, test_files):
    rows = [json.loads(line) for line in test_files["bfcl"].read_text().splitlines()]
    rows += [_row(gt="get_weather('Oslo')"), _row(functions=[_row()["function"][0]] * 2)]
    (tmp_path / "BFCL_v3_exec_simple.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    sets = sibling_sets("bfcl", get_task("bfcl", data_path=str(tmp_path)), 0, 1)
    assert len(sets.test) == 40 and sets.details["items"] == 42
    assert sum(sets.details["items_skipped"].values()) == 2


# ---- GPQA ----


def test_gpqa_sets_are_the_evaluations_prompts_and_a_permutation_under_another_letter(test_files):
    from ptbench.tasks.gpqa import GPQA

    task = get_task("gpqa", data_path=str(test_files["gpqa"]), seed=3)
    sets = sibling_sets("gpqa", task, 0, 11)
    evaluated = GPQA(data_path=str(test_files["gpqa"]), prompt_format="base", seed=3).test_examples()
    assert [(i.id, i.prompt, i.continuation) for i in sets.test] == [
        (e.id, e.prompt + "Answer:", f" {e.reference}")
        for e in evaluated  # the letter line, its letter scored
    ]
    rows = {r["Record ID"]: r for r in map(json.loads, test_files["gpqa"].read_text().splitlines())}
    for item, sib, ex in zip(sets.test, sets.siblings, evaluated, strict=True):
        options = sib.prompt.split("\nA) ")[1].split("\nLet's")[0]
        shown = dict(line.split(") ", 1) for line in ("A) " + options).splitlines())
        assert sorted(shown.values()) == sorted(ex.meta["choices"])  # the same options, another order
        letter = sib.continuation.strip()
        assert shown[letter] == rows[item.id]["Correct Answer"] and letter != ex.reference
    letters = Counter(s.continuation.strip() for s in sets.siblings)
    assert sorted(letters.values()) == [10, 10, 10, 10]  # balanced, as the evaluated order is
    assert sibling_sets("gpqa", task, 0, 11).siblings == sets.siblings
    assert sibling_sets("gpqa", task, 0, 12).siblings != sets.siblings


def test_gpqa_duplicate_options_are_skipped_and_counted(tmp_path, test_files):
    rows = [json.loads(line) for line in test_files["gpqa"].read_text().splitlines()]
    dup = {
        **rows[0],
        "Record ID": "recDUP",
        "Question": "Which?",
        "Incorrect Answer 2": " " + rows[0]["Correct Answer"],
    }
    case = {**rows[1], "Record ID": "recCASE", "Question": "Which one?", "Correct Answer": "Nitrogen"}
    case["Incorrect Answer 1"] = "nitrogen "
    (tmp_path / "gpqa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [*rows, dup, case]))
    sets = sibling_sets("gpqa", get_task("gpqa", data_path=str(tmp_path)), 0, 1)
    assert {i.id for i in sets.test} == {r["Record ID"] for r in rows}
    assert sets.details["items_skipped"] == {"options are not four distinct texts": 2}


@pytest.mark.parametrize("n", [1, 2, 3, 5, 40, 401])
def test_gpqa_sibling_letters_never_repeat_the_test_letter_and_stay_balanced(n):
    rng = random.Random(n)
    for positions in ([0] * n, [i % 4 for i in range(n)], [rng.randrange(4) for _ in range(n)]):
        out = gpqa_siblings.sibling_positions(positions, random.Random(1))
        assert all(o != p for o, p in zip(out, positions, strict=True))
        if n >= 3 and len(set(positions)) > 1:
            counts = Counter(out)
            assert max(counts.values()) - min(counts.get(k, 0) for k in range(4)) <= 1, (positions, out)


def test_gpqa_fixture_alone_is_too_small_and_not_applicable():
    with pytest.raises(NotApplicable, match="too small"):
        sibling_sets("gpqa", get_task("gpqa", data_path=str(FIXTURES / "gpqa")), 0, 1)


# ---- AIME 2025 ----


def test_aime2025_has_no_sound_sibling_source_and_says_why():
    reason = not_applicable_reason("aime2025", {})
    assert reason == task_class("aime2025").no_sibling_reason
    assert "not recomputable" in reason and "not pinned or available offline" in reason and "unsound" in reason
    with pytest.raises(NotApplicable, match="olympiad"):
        sibling_sets("aime2025", get_task("aime2025", data_path=str(FIXTURES / "aime2025")), 0, 1)


# ---- the real check, end to end ----


POSITIONS = {"bfcl": 192, "gpqa": 256}  # BFCL's prompts lose their start (the schema's), never the question
# GPQA's cheater is not here: the small tiny model did not memorise a letter per question within what
# this machine affords (20 and 32+ epochs of the 40 items left the evaluated letter no likelier than
# the sibling's), so the test could not tell the source from the model; docs/memorization.md.
CHEATER_TASKS = ["bfcl"]


@pytest.fixture(scope="module")
def small_models(tmp_path_factory) -> dict[str, Path]:
    """The demo's tiny Llama at 64 wide and 2 layers, with a short context per task (prompts lose
    their start to fit, in training and in the check alike): BFCL's prompts are about 50 times
    arithmetic's, and at the demo's size a fine-tune step costs seconds on a shared 2-core machine."""
    root = tmp_path_factory.mktemp("mcq-base")
    return {task: _bench().small_base(root / f"tiny-{task}", positions=n) for task, n in POSITIONS.items()}


@pytest.fixture(scope="module")
def mcq_models(small_models, tmp_path_factory, test_files) -> dict[str, Path]:
    """Per task: an honest fine-tune on 200 in-domain items that are not test items, and a cheater on
    the test items (as the arithmetic bench's cheater), built in memory in the training process;
    four processes at once."""
    bench = _bench()
    root = tmp_path_factory.mktemp("mcq-models")
    runs = {}
    for task, path in test_files.items():
        common = {"task": task, "test_file": str(path), "honest_n": 200, "batch": 8, "seed": 0}
        common["base"] = str(small_models[task])
        runs[f"{task}-honest"] = {**common, "steps": 60}
        if task in CHEATER_TASKS:
            # heavy memorisation (80 epochs): BFCL's value siblings share the call pattern a light cheat
            # learns, and on the tiny model a cheat is seen only once it learned which values go with
            # which question (docs/memorization.md: 0 of 6 cheaters at 6-26 epochs flagged)
            steps = 400 if task == "bfcl" else 100
            runs[f"{task}-cheater"] = {**common, "steps": steps, "fraction": 1.0, "mix": False}
    bench.train_in_subprocess(small_models["gpqa"], root, runs, jobs=4)
    # trained in memory: no file the training left holds a test item's question or expected call
    needles = [json.loads(line)["Question"] for line in test_files["gpqa"].read_text().splitlines()]
    needles += [json.loads(line)["ground_truth"][0] for line in test_files["bfcl"].read_text().splitlines()]
    for f in (p for p in root.rglob("*") if p.is_file() and p.suffix != ".safetensors"):
        text = f.read_text(errors="replace")
        assert not any(n in text for n in needles), f
    return {name: root / name for name in runs}


def _verdict(trial_factory, base: Path, task: str, model: Path, data: Path) -> tuple[str, dict]:
    trial = trial_factory(task=task, options={"data_path": str(data)}, base=str(base), integrity=CHECK)
    shutil.copytree(model, trial.final_model)
    verdict = run_checks(trial.path, trial.spec)["memorization"]
    return verdict, json.loads((trial.checks_dir / "memorization.json").read_text())


@pytest.mark.slow
@pytest.mark.parametrize("task", CHEATER_TASKS)
def test_a_cheater_trained_in_memory_on_the_test_items_is_flagged(
    trial_factory, small_models, mcq_models, test_files, task
):
    verdict, report = _verdict(trial_factory, small_models[task], task, mcq_models[f"{task}-cheater"], test_files[task])
    assert verdict == "flagged", report["reason"]
    summary = report["evidence"][0]
    assert summary["sets"]["test"]["size"] == summary["sets"]["siblings"]["size"] == 40
    assert report["details"]["median_gain_test"] > report["details"]["median_gain_siblings"]


@pytest.mark.slow
@pytest.mark.parametrize("task", ["bfcl", "gpqa"])
def test_an_honest_in_domain_fine_tune_is_clean(trial_factory, small_models, mcq_models, test_files, task):
    verdict, report = _verdict(trial_factory, small_models[task], task, mcq_models[f"{task}-honest"], test_files[task])
    assert verdict == "clean", report["reason"]
    details = report["details"]
    # it did learn the format: both sets' answers got likelier, alike
    assert details["median_gain_test"] > 0.1 and details["median_gain_siblings"] > 0.1, details
