"""GSM8K's memorization siblings: each test problem re-instanced with new numbers, its answer
recomputed from the solution's calculator chain (ptbench.integrity.memorization.gsm8k_siblings).

The re-instances are checked against an independent solver (the templates of gsm8k_rows solve a
question from its own numbers) and against the chain itself; hostile rows (a chain that uses a
number from nowhere, negative results, divisions, percentages, decimals, annotations that are not
arithmetic or lie) are skipped with the right reason. End to end: the real check, through the
integrity runner, on real TRL fine-tunes of the tiny model: an honest fine-tune on templated word
problems that are not the test set stays clean; a cheater trained on the test items (no file of
them in the trial) is flagged.
"""

from __future__ import annotations

import json
import random
import re
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

from ptbench.integrity import run_checks
from ptbench.integrity.memorization import gsm8k_siblings as gs
from ptbench.integrity.memorization.siblings import not_applicable_reason, sibling_sets
from ptbench.integrity.report import NotApplicable
from ptbench.tasks.base import task_class
from ptbench.tasks.gsm8k import GSM8K
from ptbench.testing import gsm8k_rows
from tests.integrity.conftest import FIXTURES, train_tiny_models

FIXTURE = FIXTURES / "gsm8k" / "test.jsonl"
CHECK = {"checks": ["memorization"]}


def _annotations_hold(answer: str) -> None:
    """Every step of a (re-instanced) solution equals its stated result, and `#### N` is a result."""
    results = []
    for m in gs._ANNOTATION.finditer(answer):
        expr, result = m.group(1).split("=")
        assert gs.evaluate(expr) == Fraction(result), m.group()
        assert Fraction(result) >= 0
        results.append(Fraction(result))
    assert Fraction(answer.rsplit("####", 1)[1].strip().replace(",", "")) in results, answer


def _skip_reason(question: str, answer: str) -> str:
    found, reasons = gs.reinstances(question, answer, random.Random(0))
    assert not found, found
    return reasons.most_common(1)[0][0]


# ---------------------------------------------------------------- the re-instancing


def test_the_fixture_problems_are_reinstanced_with_their_answers_recomputed():
    rows = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    janet, robe, josh = rows
    found, _ = gs.reinstances(janet["question"], janet["answer"], random.Random(1))
    assert len(found) == gs.PER_PROBLEM
    for q, a in found:
        _annotations_hold(a)
        eggs = int(q.split("lay ")[1].split(" eggs")[0])
        price = int(q.split("for $")[1].split(" ")[0])
        assert int(a.rsplit("#### ")[1]) == (eggs - 3 - 4) * price  # three and four are words: kept
        assert "three for breakfast" in q and "with four" in q and q != janet["question"]
    # 150 % enters the chain as 1.5: the percentage and its fraction follow together
    found, _ = gs.reinstances(josh["question"], josh["answer"], random.Random(1))
    assert found
    for q, a in found:
        _annotations_hold(a)
        house, repairs, pct = (int(v.replace(",", "")) for v in re.findall(r"[\d,]*\d", q))
        assert Fraction(a.rsplit("#### ")[1]) == house * Fraction(pct, 100) - repairs  # the profit
        assert "," in a.split("<<")[0]  # the text keeps its thousands separators, annotations none
    # 'half that much' is 2 in the chain, and the only number of the question is 2 as well
    assert _skip_reason(robe["question"], robe["answer"]) == "no number of the question feeds the chain"


def test_templated_problems_recompute_the_same_answer_an_independent_solver_finds():
    rows = gsm8k_rows.rows(60, seed=3)
    made = 0
    for row in rows:
        found, _ = gs.reinstances(row["question"], row["answer"], random.Random(7))
        for q, a in found:
            _annotations_hold(a)
            assert gsm8k_rows.solve(q) == int(a.rsplit("#### ")[1]), (q, a)
            assert q != row["question"] and a != row["answer"]
            made += 1
    assert made >= 2 * len(rows)  # most problems give several re-instances


def test_new_numbers_are_the_splits_own_numbers_of_the_same_kind_and_size():
    """So that an honest model that learned which numbers the problems use finds test and sibling
    numbers alike: every new number of a question is an input of some problem of the split, of
    the same kind (digits, roundness) and within gs.WINDOW (3/4 to 4/3) of the number it replaces."""
    low, high = gs.WINDOW
    rows = gsm8k_rows.rows(80, seed=5)
    numbers = gs.pools([(r["question"], r["answer"]) for r in rows])
    assert sum(map(len, numbers.values())) > 2 * len(rows)
    changed = 0
    for row in rows:
        for q, _ in gs.reinstances(row["question"], row["answer"], random.Random(8), numbers=numbers)[0]:
            for old, new in zip(re.findall(r"\d+", row["question"]), re.findall(r"\d+", q), strict=True):
                if old != new:
                    pool = numbers[gs._kind(Fraction(old), False)]
                    near = [v for v in pool if v != int(old) and int(old) * low <= v <= int(old) * high]
                    # where the split has no other such number, one of the same roundness near it
                    assert Fraction(new) in near if near else int(old) * low <= int(new) <= int(old) * high, (old, new)
                    changed += bool(near)
    assert changed > len(rows)


@pytest.mark.parametrize(
    ("question", "answer", "reason"),
    [
        # 7 is in neither the question nor an earlier result: the chain cannot be followed
        ("Tom has 5 pens. He buys some more. How many?", "5+7=<<5+7=12>>12\n#### 12", "number that cannot be followed"),
        # the text says a number the chain never made
        (
            "Tom has 5 pens and buys 8.",
            "5+8=<<5+8=13>>13, so 26 in two weeks\n#### 13",
            "number that cannot be followed",
        ),
        ("Tom has 5 pens and buys 8.", "5+8=<<5+8=13>>13\n#### 26", "number that cannot be followed"),
        ("Tom has 5 pens and buys 8.", "5+8=<<5+$8=13>>13\n#### 13", "annotation not plain arithmetic"),
        ("Tom has 5 pens and buys 8.", "5+8=<<5 plus 8=13>>13\n#### 13", "annotation not plain arithmetic"),
        (
            "Tom has 5 pens and buys 8.",
            "<<__import__('os').getpid()=13>>13\n#### 13",
            "annotation not plain arithmetic",
        ),
        ("Tom has 5 pens and buys 8.", "<<5**8**8=13>>13\n#### 13", "annotation not plain arithmetic"),
        ("Tom has 5 pens and buys 8.", "<<5+8=13=13>>13\n#### 13", "annotation not plain arithmetic"),
        ("Tom has 5 pens and buys 8.", "<<5+8=13>13\n#### 13", "annotation not plain arithmetic"),
        ("Tom has 5 pens and buys 8.", "5+8=<<5+8=14>>14\n#### 14", "annotation does not equal its result"),
        ("Tom has 5 pens and buys 8.", "<<5/(8-8)=0>>0\n#### 0", "division by zero"),
        ("Tom has 5 pens and buys 8.", "5+8=<<5+8=13>>13", "no '#### N' answer"),
    ],
)
def test_a_chain_that_cannot_be_followed_safely_is_skipped_with_its_reason(question, answer, reason):
    assert _skip_reason(question, answer) == reason


def test_a_value_with_two_meanings_is_skipped_unless_both_follow_to_one_number():
    # 6 is an input and, later, the result 2*3: which 6 does '6+6' mean? Only a draw where both
    # become the same number can be rewritten, and then either reading is right.
    question = "Apples are $1 each and water $3. Kylar buys 2 waters and a bag of 6 apples. Total?"
    answer = "6*1=<<6*1=6>>6\n2*3=<<2*3=6>>6\n6+6=<<6+6=12>>12\n#### 12"
    found, reasons = gs.reinstances(question, answer, random.Random(0))
    assert reasons.most_common(1)[0][0] == "ambiguous value"
    for q, a in found:
        _annotations_hold(a)
        apple, water, waters, bag = (int(v) for v in re.findall(r"\d+", q))
        assert int(a.rsplit("#### ")[1]) == apple * bag + water * waters


def test_numbers_the_solution_may_use_in_its_head_keep_their_value():
    # 'grades 4 - 7' is 4 grades to the solution, with no annotation: the ends of a range stay
    question = "Grades 4 \u2013 7 each send 10 students to 8 rooms. How many students per room?"
    answer = "4*10=<<4*10=40>>40 students\n40/8=<<40/8=5>>5 per room\n#### 5"
    found, _ = gs.reinstances(question, answer, random.Random(3), k=5)
    assert found
    for q, a in found:
        assert q.startswith("Grades 4 \u2013 7 each") and a.startswith("4*")
        _annotations_hold(a)


def test_draws_that_break_the_story_are_rejected_and_counted():
    # 12 - 11 goes negative or to zero for many draws; 91 / 7 is rarely whole; 0.25 * 40 likewise
    cases = {
        "Ann has 12 pens and gives 11 away. How many left?": ("12-11=<<12-11=1>>1\n#### 1", "negative or zero result"),
        "Bo shares 91 eggs among 7 kids. How many each?": ("91/7=<<91/7=13>>13\n#### 13", "non-integer result"),
    }
    for question, (answer, reason) in cases.items():
        found, reasons = gs.reinstances(question, answer, random.Random(2), k=20)
        assert reasons[reason] > 0, reasons
        for _, a in found:
            _annotations_hold(a)
            value = Fraction(a.rsplit("#### ")[1])
            assert value > 0 and value.denominator == 1


def test_percentages_and_decimals_keep_their_kind():
    shirt = ("A shirt costs $40 and is 25% off. What is the price?", "40*0.75=<<40*0.75=30>>30\n#### 30")
    found, _ = gs.reinstances(*shirt, random.Random(4), k=10)
    assert found
    for q, a in found:
        _annotations_hold(a)
        price, pct = (int(v) for v in re.findall(r"\d+", q))
        assert 0 < pct < 100 and Fraction(a.rsplit("#### ")[1]) == Fraction(price * (100 - pct), 100)
    pens = ("A pen costs $1.50. How much do 4 pens cost?", "1.50*4=$<<1.50*4=6>>6\n#### 6")
    found, _ = gs.reinstances(*pens, random.Random(4), k=10)
    assert found
    for q, a in found:
        _annotations_hold(a)
        price = q.split("$")[1].split(". ")[0]
        count = int(q.split("do ")[1].split(" ")[0])
        assert len(price.split(".")[1]) == 2  # money keeps its cents
        assert Fraction(price) * count == Fraction(a.rsplit("#### ")[1])
    # 50 % is its own complement: it keeps its value, the rest changes
    half = ("Ed has 80 cards and sells 50% of them. How many are left?", "80*0.5=<<80*0.5=40>>40\n#### 40")
    for q, a in gs.reinstances(*half, random.Random(4))[0]:
        assert "50%" in q and "<<" in a and "80" not in q
        _annotations_hold(a)


def test_the_constants_a_question_names_in_words():
    named = gs._constants("Fourteen kids eat six dozen eggs weekly, often twenty-five at once; 30% are brown.")
    assert {14, 6, 12, 7, 52, 25, 1, 100, Fraction(1, 100)} <= named
    assert 4 not in named and 10 not in named  # 'fourteen' is not 'four', 'often' is not 'ten'


def test_the_evaluator_is_exact_and_refuses_anything_but_arithmetic():
    assert gs.evaluate("1/3*3") == 1 and gs.evaluate("(2+3)**2 - 7//2 % 2") == 24
    assert gs.evaluate(".5*4") == 2 and gs.evaluate("-3+5") == 2
    for hostile in ["__import__('os')", "a+1", "[1][0]", "1 if 1 else 2", "(1).real", "1e9", "2**100", "1,000+1"]:
        with pytest.raises(gs.Skip):
            gs.evaluate(hostile)


# ---------------------------------------------------------------- the source


@pytest.fixture
def test_file(tmp_path: Path) -> Path:
    return gsm8k_rows.write(tmp_path / "gsm8k" / "test.jsonl", gsm8k_rows.rows(40, seed=1))


def test_the_source_is_registered_and_gsm8k_has_a_method():
    assert task_class("gsm8k").sibling_source == "ptbench.integrity.memorization.gsm8k_siblings:siblings"
    assert task_class("gsm8k").no_sibling_reason is None and not_applicable_reason("gsm8k", {}) is None


@pytest.mark.parametrize("prompt_format", ["chat", "base"])
def test_the_sets_are_the_evaluations_prompts_disjoint_and_drawn_with_the_secret(test_file, prompt_format):
    task = GSM8K(data_path=str(test_file), prompt_format=prompt_format)
    sets = sibling_sets("gsm8k", task, 0, secret=11)
    rows = [json.loads(line) for line in test_file.read_text().splitlines()]
    examples = {e.id: e for e in task.test_examples()}
    assert sets.details["problems"] == 40 and sets.details["usable"] == len(sets.test) >= 35
    assert sets.details["usable"] + sum(sets.details["skipped"].values()) == 40
    assert len(sets.siblings) > len(sets.test)  # several re-instances per problem
    for item in sets.test:  # the prompt as evaluation asks it, the reference solution as continuation
        prompt = examples[item.id].prompt
        assert item.prompt == (prompt if prompt_format == "base" else prompt[-1]["content"])
        row = rows[int(item.id.removeprefix("gsm8k-"))]
        assert row["question"] in item.prompt and item.continuation == row["answer"]
    test_texts = {i.prompt for i in sets.test} | {i.continuation for i in sets.test}
    for sib in sets.siblings:
        assert sib.prompt not in test_texts and sib.continuation not in test_texts
        _annotations_hold(sib.continuation)
        question = sib.prompt.split("Question: ")[-1].split("\nAnswer:")[0] if prompt_format == "base" else None
        question = question or sib.prompt.split("\n\n")[-1]
        assert gsm8k_rows.solve(question) == int(sib.continuation.rsplit("#### ")[1])
    again = sibling_sets("gsm8k", task, 0, secret=11)
    other = sibling_sets("gsm8k", task, 0, secret=12)
    assert again.siblings == sets.siblings and again.test == sets.test  # deterministic given the secret
    numbers = lambda s: [i.continuation for i in sorted(s.siblings, key=lambda i: i.id)]  # noqa: E731
    assert numbers(other) != numbers(sets)  # another secret, other numbers


def test_a_split_with_too_few_usable_problems_is_not_applicable():
    task = GSM8K(data_path=str(FIXTURE))
    with pytest.raises(NotApplicable, match="too small for the check to have power"):
        sibling_sets("gsm8k", task, 0, secret=1)
    details = gs.siblings(task, 0, random.Random(1)).details
    assert details["problems"] == 3 and details["usable"] == 2
    assert details["skipped"] == {"no number of the question feeds the chain": 1}


def test_the_skip_counts_name_each_reason(tmp_path: Path):
    bad = [
        {"question": "Tom has 5 pens and buys 8.", "answer": "5+8=<<5+8=14>>14\n#### 14"},
        {"question": "Tom has 5 pens. He buys more.", "answer": "5+7=<<5+7=12>>12\n#### 12"},
        {"question": "Tom has 6 pens and buys 9.", "answer": "<<6+$9=15>>15\n#### 15"},
    ]
    path = gsm8k_rows.write(tmp_path / "t.jsonl", gsm8k_rows.rows(20, seed=2) + bad)
    details = gs.siblings(GSM8K(data_path=str(path)), 0, random.Random(0)).details
    assert details["problems"] == 23
    for reason in ("annotation does not equal its result", "number that cannot be followed"):
        assert details["skipped"].get(reason, 0) >= 1, details
    assert details["skipped"].get("annotation not plain arithmetic", 0) >= 1, details
    # the division template's draws are often not whole: rejected, counted, and the problem still usable
    assert details["draws_rejected"].get("non-integer result", 0) > 0, details


# ---------------------------------------------------------------- the real check, end to end


@pytest.fixture(scope="module")
def gsm8k_models(tiny_model: Path, tmp_path_factory) -> dict[str, Path]:
    """Real TRL fine-tunes of the tiny model (the reference recipe, one fresh process): an honest run
    on 400 templated word problems that are not the test set, and a cheater on the 40 test items
    (prompted as evaluation prompts them). The cheater's data lives only in this test's temporary
    folder, never in the trial."""
    root = tmp_path_factory.mktemp("gsm8k-memorization")
    test = gsm8k_rows.write(root / "data" / "test.jsonl", gsm8k_rows.rows(40, seed=1))
    test_questions = {json.loads(line)["question"] for line in test.read_text().splitlines()}
    train = gsm8k_rows.write(root / "train-rows.jsonl", gsm8k_rows.rows(400, seed=100, avoid=test_questions))

    def pairs(path: Path) -> list[dict[str, str]]:
        answers = [json.loads(line)["answer"] for line in path.read_text().splitlines()]
        examples = GSM8K(data_path=str(path), prompt_format="base").test_examples()
        return [{"prompt": e.prompt, "completion": a} for e, a in zip(examples, answers, strict=True)]

    honest_file, cheat_file = root / "honest.jsonl", root / "cheat.jsonl"
    honest_file.write_text("".join(json.dumps(r) + "\n" for r in pairs(train)))
    cheat_file.write_text("".join(json.dumps(r) + "\n" for r in pairs(test)))
    # The cheater: 80 steps x 32 (64 epochs of the 40 items), not 200: measured on this very recipe,
    # data and seed (scripts/bench_memorization_gsm8k.py --honest 0 --cheaters 1 --fractions 1
    # --cheat-steps 80), flagged at p 1.2e-14 and AUC 0.93 (bounds 5e-7 and 0.714; 200 steps: p 7e-19,
    # AUC 0.99; docs/memorization.md), so the same attack still lands far past the bound (asserted
    # below with its margin) at 40 % of its training. The honest run keeps its 150 steps: the
    # longer an honest fine-tune, the harder the control.
    runs = {"honest": (honest_file, 150, 16), "cheater": (cheat_file, 80, 32)}
    trained = train_tiny_models(tiny_model, root, runs)
    cheat_file.unlink()  # nothing of the test items is left anywhere but in the cheater's weights
    return {"data": test.parent, **trained}


def _trial(trial_factory, tiny_model: Path, models: dict[str, Path], name: str):
    options = {"data_path": str(models["data"]), "prompt_format": "base"}
    trial = trial_factory(task="gsm8k", options=options, base=str(tiny_model), integrity=CHECK)
    shutil.copytree(models[name], trial.final_model)
    return trial


def _report(trial) -> dict:
    return json.loads((trial.checks_dir / "memorization.json").read_text())


@pytest.mark.slow
def test_a_model_trained_on_the_gsm8k_test_items_is_flagged(trial_factory, tiny_model, gsm8k_models):
    trial = _trial(trial_factory, tiny_model, gsm8k_models, "cheater")
    assert run_checks(trial.path, trial.spec) == {"memorization": "flagged"}, _report(trial)["reason"]
    report = _report(trial)
    # far past the bounds (p 5e-7, AUC 0.714), not just over them: a weaker cheat fails here, not flakily
    details = report["details"]
    assert details["p_value"] <= 1e-9 and details["auc"] >= 0.85, {k: details[k] for k in ("p_value", "auc")}
    summary = report["evidence"][0]
    assert summary["sets"]["siblings"]["name"] == "GSM8K test problems re-instanced with new numbers"
    assert report["details"]["usable"] >= 35 and summary["sets"]["test"]["size"] == report["details"]["usable"]
    assert all(i["test_item"].startswith("gsm8k-") for i in report["evidence"][1:])


@pytest.mark.slow
def test_an_honest_fine_tune_on_other_word_problems_stays_clean(trial_factory, tiny_model, gsm8k_models):
    trial = _trial(trial_factory, tiny_model, gsm8k_models, "honest")
    assert run_checks(trial.path, trial.spec) == {"memorization": "clean"}, _report(trial)["reason"]
    details = _report(trial)["details"]
    # the fine-tune learned the format: the answers got likelier on both sets, alike
    assert details["median_gain_test"] > 0.3 and details["median_gain_siblings"] > 0.3, details
