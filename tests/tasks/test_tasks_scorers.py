"""Answer extraction and scoring rules, checked on real answer strings and tricky model outputs."""

from __future__ import annotations

import collections
import json

import pytest

from ptbench.tasks import get_task
from ptbench.tasks.aime2025 import is_equivalent
from ptbench.tasks.bfcl import call_source, parse_call, to_openai_schema
from ptbench.tasks.gpqa import extract_letter, shuffled_choices
from ptbench.tasks.gsm8k import extract_answer, reference_answer

from .conftest import FIXTURES, require


def test_gsm8k_reference_answers_from_real_strings():
    rows = [json.loads(line) for line in (FIXTURES / "gsm8k" / "test.jsonl").read_text().splitlines()]
    assert [reference_answer(r["answer"]) for r in rows] == ["18", "3", "70000"]
    assert reference_answer("... so 1,000 - 10 = 990\n#### 1,000") == "1000"
    assert reference_answer("#### -3") == "-3"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Janet sells 9 eggs and makes 9 * 2 = $18.\n#### 18", "18"),
        ("She makes $18 every day.", "18"),
        ("The profit is $70,000.", "70000"),
        ("The answer is 70,000 dollars", "70000"),
        ("He ends with -5 degrees. Answer: -5", "-5"),
        ("It costs 3 apples at $2 each, 7 pears... so the total is 13 dollars.", "13"),
        ("First 12, then 15, then the final answer is 42. Check: 42 - 12 = 30.", "42"),
        ("#### 18.00", "18"),
        ("\\boxed{1,234}", "1234"),
        ("The result is 0.5 kg", "0.5"),
        ("I don't know.", None),
    ],
)
def test_gsm8k_extraction(text, expected):
    assert extract_answer(text) == expected


def test_gsm8k_scores_equal_numbers_not_strings():
    task = get_task("gsm8k", data_path=str(FIXTURES / "gsm8k"))
    ex = task.test_examples()[2]
    assert ex.reference == "70000"
    assert task.score(ex, "So he made a profit of $70,000.\n#### 70,000") == 1.0
    assert task.score(ex, "#### 7000") == 0.0


@pytest.mark.parametrize(
    "completion, reference, ok",
    [
        ("so the sum is \\boxed{70}", "70", True),
        ("\\boxed{070}", "70", True),
        ("The answer is $70$.", "70", True),
        ("\\boxed{\\frac{140}{2}}", "70", True),
        ("\\boxed{69}", "70", False),
        ("no idea", "70", False),
        ("\\boxed{24}", "24", True),
    ],
)
def test_aime_equivalence(completion, reference, ok):
    assert is_equivalent(completion, reference) is ok


def _gpqa_rows(n):
    return [
        {
            "Question": f"q{i}",
            "Correct Answer": f"right{i}",
            "Incorrect Answer 1": f"w1-{i}",
            "Incorrect Answer 2": f"w2-{i}",
            "Incorrect Answer 3": f"w3-{i}",
            "Record ID": f"rec{i}",
        }
        for i in range(n)
    ]


def test_gpqa_shuffle_is_deterministic_and_balanced():
    rows = _gpqa_rows(448)
    a, b = shuffled_choices(rows, seed=0), shuffled_choices(rows, seed=0)
    assert a == b
    assert shuffled_choices(rows, seed=1) != a
    counts = collections.Counter(pos for _, pos in a)
    assert sorted(counts) == [0, 1, 2, 3] and max(counts.values()) - min(counts.values()) <= 1
    for row, (choices, pos) in zip(rows, a, strict=True):
        assert choices[pos] == row["Correct Answer"] and sorted(choices) == sorted(
            [row["Correct Answer"], row["Incorrect Answer 1"], row["Incorrect Answer 2"], row["Incorrect Answer 3"]]
        )
    odd = collections.Counter(pos for _, pos in shuffled_choices(_gpqa_rows(10), seed=3))
    assert max(odd.values()) - min(odd.values()) <= 1


def test_gpqa_task_prompts_and_letters():
    task = get_task("gpqa", data_path=str(FIXTURES / "gpqa"), seed=7)
    ex = task.test_examples()[0]
    text = ex.prompt[0]["content"]
    assert f"{ex.reference}) Nitrogen" in text
    assert task.score(ex, f"Reasoning...\nAnswer: {ex.reference}") == 1.0
    assert extract_letter("The answer is (C).") == "C"
    assert extract_letter("Answer: B\n...on reflection\nAnswer: D") == "D"


def test_bfcl_call_parsing():
    names = ["calculate_triangle_area"]
    hermes = '<tool_call>\n{"name": "calculate_triangle_area", "arguments": {"base": 10, "height": 5}}\n</tool_call>'
    assert parse_call(hermes, names) == ("calculate_triangle_area", {"base": 10, "height": 5})
    assert parse_call(
        'Sure: {"name": "calculate_triangle_area", "arguments": "{\\"base\\": 1, \\"height\\": 2}"}', names
    ) == ("calculate_triangle_area", {"base": 1, "height": 2})
    assert parse_call("calculate_triangle_area(base=3, height=4)", names) == (
        "calculate_triangle_area",
        {"base": 3, "height": 4},
    )
    assert parse_call("calculate_triangle_area(base=__import__('os').system('x'), height=4)", names) is None
    assert call_source("f", {"a": "x'); import os; os.system('y"}) == "f(a=\"x'); import os; os.system('y\")"
    assert to_openai_schema({"type": "dict", "properties": {"p": {"type": "float"}}}) == {
        "type": "object",
        "properties": {"p": {"type": "number"}},
    }


@pytest.mark.slow
def test_bfcl_executed_scoring():
    from ptbench.sandbox.codeexec import bwrap_available

    require(bwrap_available(), "bubblewrap is needed to execute BFCL calls sandboxed")
    real = get_task("bfcl", data_path=str(FIXTURES / "bfcl"), functions_module=str(FIXTURES / "bfcl" / "functions.py"))
    exs = real.test_examples()
    answers = [
        '<tool_call>{"name": "calculate_triangle_area", "arguments": {"base": 10, "height": 5}}</tool_call>',
        "calc_binomial_probability(n=20, k=5, p=0.6)",
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "unit": "kelvin"}}</tool_call>',
    ]
    scored = real.score_batch(exs, answers)
    assert scored.scores == [1.0, 1.0, 0.0]  # kelvin is not in the enum
    assert scored.details[0]["executed"]["gt"] == {"value": 25.0}
    wrong = real.score_batch(exs[:2], ["calculate_triangle_area(base=10, height=6)", "nothing"])
    assert wrong.scores == [0.0, 0.0] and wrong.extra["unparsed_calls"] == 1
    stubs = get_task("bfcl", data_path=str(FIXTURES / "bfcl"))
    assert stubs.score_batch(
        exs,
        [
            '{"name": "calculate_triangle_area", "arguments": {"height": 5, "base": 10}}',
            "calc_binomial_probability(n=20, k=5, p=0.6)",
            'get_weather(city="Paris", unit="celsius")',
        ],
    ).scores == [1.0, 1.0, 1.0]
