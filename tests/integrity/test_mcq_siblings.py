"""Memorization's sibling sources for BFCL (renamed functions and parameters) and GPQA (options in
another order), and AIME 2025's reason for having none.

Unit tests on the fixtures and on hostile rows (names that collide, nested parameters, a question
that names the function, calls the task's parser reads otherwise, duplicate options); then the real
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
import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest

from ptbench.integrity import run_checks
from ptbench.integrity.memorization import bfcl_siblings, gpqa_siblings
from ptbench.integrity.memorization.siblings import NO_METHOD, not_applicable_reason, sibling_sets
from ptbench.integrity.report import NotApplicable
from ptbench.tasks import get_task
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


def test_bfcl_fixture_rows_are_renamed_consistently_and_still_parse():
    rows = [json.loads(line) for line in (FIXTURES / "bfcl" / "BFCL_v3_exec_simple.json").read_text().splitlines()]
    for row in rows:
        for seed in range(20):
            out = bfcl_siblings.rename_item(row, random.Random(seed))
            assert not isinstance(out, str), out
            renamed, mapping = out
            original = _parsed_matches_schema(row)
            call = _parsed_matches_schema(renamed)
            assert call == (mapping[original[0]], {mapping.get(k, k): v for k, v in original[1].items()})
            old = {row["function"][0]["name"], *row["function"][0]["parameters"]["properties"]}
            new = {renamed["function"][0]["name"], *renamed["function"][0]["parameters"]["properties"]}
            assert not old & new and len(new) == len(old)  # every name renamed, none reused
            assert all(n.isidentifier() for n in new)
            description = renamed["function"][0]["description"]
            if original[0] == "calc_binomial_probability":  # single letters in text are the parameters' names
                assert (
                    description
                    == f"Calculates the probability of getting {mapping['k']} successes in {mapping['n']} trials."
                )
            else:  # plain words in text are English ("the base of the triangle"): kept as written
                assert description == row["function"][0]["description"]


def test_bfcl_sets_are_the_evaluations_prompts_and_drawn_with_the_secret(test_files):
    from ptbench.tasks.bfcl import BFCL

    task = get_task("bfcl", data_path=str(test_files["bfcl"]))
    sets = sibling_sets("bfcl", task, 0, 5)
    assert len(sets.test) == len(sets.siblings) == 40 and sets.details["items_skipped"] == {}
    evaluated = BFCL(data_path=str(test_files["bfcl"]), prompt_format="base", allow_unisolated=True).test_examples()
    assert [(i.id, i.prompt, i.continuation) for i in sets.test] == [(e.id, e.prompt, e.reference) for e in evaluated]
    for item, sib in zip(sets.test, sets.siblings, strict=True):
        assert sib.id == item.id + " (renamed)" and sib.continuation != item.continuation
        assert item.continuation.split("(")[0] in item.prompt and item.continuation.split("(")[0] not in sib.prompt
    again, other = sibling_sets("bfcl", task, 0, 5), sibling_sets("bfcl", task, 0, 6)
    assert again.siblings == sets.siblings  # the campaign's secret gives every trial the same siblings
    assert [i.continuation for i in other.siblings] != [i.continuation for i in sets.siblings]
    fresh = [sibling_sets("bfcl", task, 0).siblings for _ in range(2)]  # no secret: drawn afresh per run
    assert fresh[0] != fresh[1]


def test_bfcl_the_fixture_alone_is_too_small_and_not_applicable():
    with pytest.raises(NotApplicable, match="too small"):
        sibling_sets("bfcl", get_task("bfcl", data_path=str(FIXTURES / "bfcl")), 0, 1)


def test_bfcl_names_that_collide_are_renamed_apart():
    """The function shares a name with its parameter; parameters already use the names the renamer
    draws from. One map for the whole item; no new name is any old name, a keyword or a builtin."""
    import builtins
    import keyword

    params = {n: {"type": "integer", "description": "x"} for n in ("area", "value", "rate", "total", "score")}
    row = _row("area", params, "Compute it.", "area(area=1, value=2, rate=3, total=4, score=5)", required=["area"])
    for seed in range(200):
        out = bfcl_siblings.rename_item(row, random.Random(seed))
        assert not isinstance(out, str), out
        renamed, mapping = out
        assert mapping["area"] == renamed["function"][0]["name"]  # the function and its parameter alike
        new = list(mapping.values())
        assert len(set(new)) == len(new) and not set(new) & set(params)
        assert not any(keyword.iskeyword(n) or n in dir(builtins) for n in new)
        call = _parsed_matches_schema(renamed)
        assert call == (mapping["area"], {mapping[k]: v for k, v in zip(params, range(1, 6), strict=True)})


def test_bfcl_nested_parameters_keep_their_keys_and_values():
    """A dict parameter's properties are strings inside the call: kept, and a top-level name that is
    also a nested key is kept too (renaming one would make the other ambiguous)."""
    params = {
        "config": {
            "type": "dict",
            "description": "Settings.",
            "properties": {"depth": {"type": "integer"}, "mode": {"type": "string"}},
        },
        "mode": {"type": "string", "description": "The mode."},
        "max_items": {"type": "integer", "description": "At most this many; see max_items."},
    }
    gt = "plan_route(config={'depth': 2, 'mode': 'fast'}, mode='slow', max_items=3)"
    row = _row("plan_route", params, "Plan it with max_items=3.", gt, required=["config"])
    renamed, mapping = bfcl_siblings.rename_item(row, random.Random(0))  # type: ignore[misc]
    assert "mode" not in mapping and "depth" not in mapping
    assert set(mapping) == {"plan_route", "config", "max_items"}
    name, args = _parsed_matches_schema(renamed)
    assert args[mapping["config"]] == {"depth": 2, "mode": "fast"} and args["mode"] == "slow"
    new_params = renamed["function"][0]["parameters"]["properties"]
    assert new_params[mapping["config"]]["properties"] == params["config"]["properties"]
    # a code-like name is renamed wherever the text names it: the question and the descriptions
    assert renamed["question"][0][0]["content"] == f"Plan it with {mapping['max_items']}=3."
    assert new_params[mapping["max_items"]]["description"] == f"At most this many; see {mapping['max_items']}."


def test_bfcl_a_question_that_names_the_function_is_renamed_with_it():
    question = "Call get_weather with city='Oslo' and tell me the city's weather (use `unit`)."
    params = {"city": {"type": "string", "description": "City."}, "unit": {"type": "string", "description": "Unit."}}
    row = _row("get_weather", params, question, "get_weather(city='Oslo', unit='celsius')")
    renamed, m = bfcl_siblings.rename_item(row, random.Random(3))  # type: ignore[misc]
    text = renamed["question"][0][0]["content"]
    # the function everywhere; a plain word only where written as code (city=, `unit`), not as English
    assert (
        text == f"Call {m['get_weather']} with {m['city']}='Oslo' and tell me the city's weather (use `{m['unit']}`)."
    )
    assert m["get_weather"].startswith("get_")  # a known leading verb is kept
    assert renamed["ground_truth"] == [f"{m['get_weather']}({m['city']}='Oslo', {m['unit']}='celsius')"]


def test_bfcl_single_letter_names_follow_the_text_except_english_words():
    params = {k: {"type": "integer", "description": f"The {k} side."} for k in ("a", "b")}
    row = _row(
        "hypotenuse", params, "With a = 3 and b = 4, a right triangle.", "hypotenuse(a=3, b=4)", required=["a", "b"]
    )
    renamed, m = bfcl_siblings.rename_item(row, random.Random(0))  # type: ignore[misc]
    assert "a" not in m and "b" in m  # 'a' is an English word in this text: which mentions name it is undecidable
    assert renamed["question"][0][0]["content"] == f"With a = 3 and {m['b']} = 4, a right triangle."
    assert renamed["function"][0]["parameters"]["properties"][m["b"]]["description"] == f"The {m['b']} side."


def test_bfcl_a_name_written_inside_a_value_is_kept():
    """`sort_key` is a parameter and also the value of another: renaming it in the question but not in
    the string would make the text and the call disagree."""
    params = {"sort_key": {"type": "string", "description": "x"}, "order_by": {"type": "string", "enum": ["user_id"]}}
    gt = "list_users(sort_key='user_id', order_by='user_id')"
    params["user_id"] = {"type": "integer", "description": "y"}
    row = _row("list_users", params, "List users by user_id.", gt, required=["sort_key"])
    renamed, m = bfcl_siblings.rename_item(row, random.Random(0))  # type: ignore[misc]
    assert "user_id" not in m and {"list_users", "sort_key", "order_by"} <= set(m)
    assert renamed["question"][0][0]["content"] == "List users by user_id."
    _parsed_matches_schema(renamed)


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
    ],
)
def test_bfcl_items_that_cannot_be_renamed_safely_are_skipped_with_the_reason(row, reason):
    out = bfcl_siblings.rename_item(row, random.Random(0))
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
    assert reason == NO_METHOD["aime2025"]
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
            runs[f"{task}-cheater"] = {**common, "steps": 100, "fraction": 1.0, "mix": False}
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
