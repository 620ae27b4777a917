"""The code sandbox against hostile programs, with real bubblewrap (and the opt-in unisolated mode);
the plain-data wire codec; fail-closed isolation; BFCL's secret-bearing report channel.

Seam: a node where bubblewrap cannot create namespaces is simulated by putting a `bwrap` first on
PATH that fails the way the real one does there (message and exit status); nothing else is faked."""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path

import pytest

from ptbench.sandbox import wire
from ptbench.sandbox.codeexec import (
    IsolationUnavailable,
    Limits,
    bwrap_available,
    require_isolation,
    run_many,
    run_python,
)
from ptbench.tasks import get_task
from tests.support import own_sandbox_uid
from tests.tasks.conftest import FIXTURES, require

FAST = Limits(wall_seconds=8, cpu_seconds=3, max_processes=16)


@pytest.fixture
def bwrap():
    require(bwrap_available(), "bubblewrap (bwrap) with user/PID/net namespaces is needed for the sandbox tests")
    return "bwrap"


def test_good_and_failing_programs(bwrap):
    assert run_python("print('hi')", FAST, isolation=bwrap).stdout == "hi\n"
    failed = run_python("assert 1 == 2", FAST, isolation=bwrap)
    assert failed.status == "error" and "AssertionError" in failed.stderr


def test_infinite_loop_is_stopped_by_the_cpu_limit(bwrap):
    r = run_python("while True: pass", Limits(wall_seconds=60, cpu_seconds=2), isolation=bwrap)
    # On a busy machine the wall limit may come first; either way it is stopped and failed.
    assert not r.exited_cleanly and (r.status == "killed" and "SIGXCPU" in r.reason or r.status == "timeout")


def test_sleeping_forever_is_stopped_by_the_wall_limit(bwrap):
    r = run_python("import time; time.sleep(600)", Limits(wall_seconds=2), isolation=bwrap)
    assert r.status == "timeout" and r.seconds < 30


def test_fork_bomb_is_contained_and_leaves_nothing_behind(bwrap):
    import psutil

    bomb = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    r = run_python(bomb, Limits(wall_seconds=4, cpu_seconds=2, max_processes=16), isolation=bwrap)
    assert not r.exited_cleanly

    # The PID namespace died with the sandbox: no bomb process survives (as root the program ran
    # as a spare uid >= 2,000,000; otherwise it is a child of a bwrap that is gone).
    def survivors():
        return [
            p
            for p in psutil.process_iter(["uids", "cmdline"])
            if p.info["uids"] and own_sandbox_uid(p.info["uids"].real)
        ]

    for _ in range(50):
        if not survivors():
            break
        time.sleep(0.1)
    assert survivors() == []
    # A process limit is really enforced (by the kernel, also as root: the launcher drops to a
    # spare uid): a program that forks 100 children gets at most the limit.
    counting = (
        "import os, time\nn = 0\nfor _ in range(100):\n    try:\n        if os.fork() == 0:\n"
        "            time.sleep(3); os._exit(0)\n"
        "        n += 1\n    except OSError:\n        break\nprint(n)\n"
    )
    forked = run_python(counting, Limits(wall_seconds=10, max_processes=16), isolation=bwrap)
    assert int(forked.stdout.strip() or 0) < 16, forked


def test_rm_rf_home_cannot_touch_the_host(bwrap, tmp_path: Path):
    canary = tmp_path / "canary.txt"
    canary.write_text("still here")
    code = (
        "import os, shutil, subprocess\n"
        "subprocess.run(['rm', '-rf', os.path.expanduser('~') + '/'], check=False)\n"
        f"shutil.rmtree({str(tmp_path)!r}, ignore_errors=True)\n"
        f"print(os.path.exists({str(canary)!r}), os.path.exists('/work'), "
        "os.path.exists(os.path.expanduser('~/.cache')))\n"
        "open('/usr/ptbench-escape', 'w')\n"
    )
    r = run_python(code, FAST, isolation=bwrap)
    assert not r.exited_cleanly and "Read-only file system" in r.stderr
    assert r.stdout == "False False False\n"  # the host's files are not even visible
    assert canary.read_text() == "still here"
    assert Path(os.path.expanduser("~")).is_dir()


def test_no_network(bwrap):
    code = "import socket\nsocket.create_connection(('1.1.1.1', 80), timeout=3)\nprint('connected')"
    r = run_python(code, FAST, isolation=bwrap)
    assert not r.exited_cleanly and "connected" not in r.stdout


def test_private_tmp_and_empty_environment(bwrap):
    os.environ["PTBENCH_SECRET_FOR_TEST"] = "s3cret"
    try:
        r = run_python(
            "import os; open('/tmp/x', 'w').write('1'); print(sorted(os.environ)); print(os.listdir('/tmp'))",
            FAST,
            isolation=bwrap,
        )
    finally:
        del os.environ["PTBENCH_SECRET_FOR_TEST"]
    assert r.exited_cleanly and "PTBENCH_SECRET_FOR_TEST" not in r.stdout and "['x']" in r.stdout


def test_memory_limit(bwrap):
    r = run_python("x = bytearray(8 << 30)", Limits(memory_bytes=512 << 20), isolation=bwrap)
    assert not r.exited_cleanly and "MemoryError" in r.stderr


def test_output_flood_is_capped_and_harness_keeps_running(bwrap):
    results = run_many(
        ["while True: print('x' * 100000)", "print(1 + 1)"],
        Limits(wall_seconds=4, cpu_seconds=2, output_bytes=1000),
        isolation=bwrap,
    )
    assert not results[0].exited_cleanly and len(results[0].stdout) <= 1000
    assert results[1].exited_cleanly and results[1].stdout == "2\n"


def test_unisolated_mode_still_limits_time_and_memory():
    assert run_python("print(2)", FAST, isolation="none").stdout == "2\n"
    assert run_python("while True: pass", FAST, isolation="none").status in ("killed", "timeout")
    assert (
        "MemoryError" in run_python("x = bytearray(8 << 30)", Limits(memory_bytes=512 << 20), isolation="none").stderr
    )


# ---- the wire codec: the only thing that crosses from a candidate into the checker ----------------


def test_plain_values_round_trip_exactly():
    values = [
        None,
        True,
        False,
        0,
        -255,
        10**400,
        2.5,
        -0.0,
        math.inf,
        -math.inf,
        "é\ud800",
        b"\x00\xff",
        [1, [2]],
        (1, (2,)),
        {"a": 1, 2: [3], (4, 5): None},
        {1, 2},
        frozenset({"x"}),
        range(1, 9, 2),
    ]
    back = wire.decode(wire.loads(wire.dumps(wire.encode(values))))
    assert back == values and [type(v) for v in back] == [type(v) for v in values]
    assert math.isnan(wire.decode(wire.loads(wire.dumps(wire.encode(math.nan)))))
    assert list(wire.decode(wire.encode(x for x in (1, 2)))) == [1, 2]  # a returned generator stays an iterator
    assert wire.decode(wire.encode(True)) is True and type(wire.decode(wire.encode(1))) is int


class AlwaysEqual:
    def __eq__(self, other):
        return True


class EqualInt(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


def test_objects_that_lie_do_not_cross():
    with pytest.raises(wire.WireError):
        wire.encode(AlwaysEqual())
    with pytest.raises(wire.WireError):
        wire.encode([1, {"k": object()}])
    crossed = wire.decode(wire.encode(EqualInt(3)))  # a subclass crosses as its plain value
    assert type(crossed) is int and crossed == 3 and crossed != 4


@pytest.mark.parametrize(
    "text",
    [
        '["object", "AlwaysEqual"]',
        '["int", 5]',
        '["int", "--5"]',
        '["int", "0x5"]',
        '["float", 1.0]',
        '["bool", 1]',
        '["set", [["list", []]]]',
        '["dict", [[["list", []], ["none"]]]]',
        '["list", [1]]',
        '["none", 1]',
        '["range", [0, 1, 0]]',
        '["float", NaN]',
        '["str", "a"] trailing',
        "[" * 100000 + "]" * 100000,
        '["bytes", "!!"]',
        "not json",
        "",
    ],
)
def test_malformed_messages_are_rejected(text):
    with pytest.raises(wire.WireError):
        wire.decode(wire.loads(text.encode()))


# ---- fail closed ---------------------------------------------------------------------------------


@pytest.fixture
def bwrap_forbidden(tmp_path, monkeypatch):
    """A node whose bubblewrap cannot create namespaces (what unprivileged-userns-off prints)."""
    fake = tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, likely because the kernel "
        "does not allow non-privileged user namespaces.' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ['PATH']}")
    return fake


def test_code_execution_refuses_to_run_unisolated_without_opt_in(bwrap_forbidden, monkeypatch):
    with pytest.raises(IsolationUnavailable, match="No permissions to creating new namespace.*allow_unisolated: true"):
        require_isolation()
    with pytest.raises(IsolationUnavailable):
        run_python("print(1)")  # no isolation given: the same check, nothing runs
    for name in ("humaneval", "bfcl"):
        with pytest.raises(IsolationUnavailable):
            get_task(name, data_path=str(FIXTURES / "bfcl")).test_examples()  # before any generation
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(IsolationUnavailable, match="not on PATH"):
        require_isolation()


def test_unisolated_opt_in_is_recorded(bwrap_forbidden):
    assert require_isolation(allow_unisolated=True) == "none"
    task = get_task("humaneval", prompt_format="base", allow_unisolated=True, timeout_s=4)
    ex = next(e for e in task.test_examples() if e.id == "HumanEval/53")
    scored = task.score_batch([ex, ex], [ex.reference, "    import os\n    os._exit(0)\n"])
    assert scored.scores == [1.0, 0.0]  # verdicts are still checked
    assert scored.settings["sandbox"]["isolation"] == "none" and scored.extra["isolation"] == "none"
    bfcl = get_task("bfcl", data_path=str(FIXTURES / "bfcl"), allow_unisolated=True)
    exs = bfcl.test_examples()[:1]
    assert (
        bfcl.score_batch(exs, ["calculate_triangle_area(base=10, height=5)"]).settings["sandbox"]["isolation"] == "none"
    )


# ---- BFCL: results count only from the private channel, with the run's secret ----------------------


def test_report_channel_carries_the_secret_and_stdout_does_not_count(bwrap):
    code = "import os\nprint('fake')\nr, w = __ptbench_channel__\nos.write(w, os.read(r, 100).strip() + b' reported')\n"
    res = run_python(code, FAST, isolation=bwrap, secret="s3cr3t")
    assert res.report == b"s3cr3t reported" and res.stdout == "fake\n"
    assert (
        "s3cr3t"
        not in run_python(
            "import sys; print(sys.argv, open('/proc/self/cmdline').read())", FAST, isolation=bwrap, secret="s3cr3t"
        ).stdout
    )


def test_bfcl_function_printing_forged_results_scores_zero(bwrap, tmp_path):
    functions = tmp_path / "functions.py"
    functions.write_text(
        "import json\n"
        "def calculate_triangle_area(base, height):\n"
        "    for tag in ('gt', 'pred'):\n"
        "        print('@@PTBENCH ' + json.dumps([tag, {'value': 1}]))\n"
        "    print(json.dumps({'secret': 'guess', 'results': {'gt': {'value': 1}, 'pred': {'value': 1}}}))\n"
        "    return base * height / 2 if base == 10 and height == 5 else 1 / 0\n"
    )
    task = get_task("bfcl", data_path=str(FIXTURES / "bfcl"), functions_module=str(functions))
    exs = task.test_examples()[:1]
    scored = task.score_batch(
        exs * 2, ["calculate_triangle_area(base=10, height=5)", "calculate_triangle_area(base=1, height=1)"]
    )
    assert scored.scores == [1.0, 0.0]  # the printed lines changed nothing
    assert "error" in scored.details[1]["executed"]["pred"]
    assert json.dumps(scored.details).count("guess") == 0
