"""The code sandbox against hostile programs, with real bubblewrap (and the rlimits fallback)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ptbench.sandbox.codeexec import Limits, bwrap_available, run_many, run_python

from .conftest import require

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
    assert not r.passed and (r.status == "killed" and "SIGXCPU" in r.reason or r.status == "timeout")


def test_sleeping_forever_is_stopped_by_the_wall_limit(bwrap):
    r = run_python("import time; time.sleep(600)", Limits(wall_seconds=2), isolation=bwrap)
    assert r.status == "timeout" and r.seconds < 30


def test_fork_bomb_is_contained_and_leaves_nothing_behind(bwrap):
    import psutil

    before = len(psutil.pids())
    bomb = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    r = run_python(bomb, Limits(wall_seconds=4, cpu_seconds=2, max_processes=16), isolation=bwrap)
    assert not r.passed
    # The PID namespace died with the sandbox: no bomb process survives.
    assert len(psutil.pids()) < before + 10
    # A process limit is really enforced (by the kernel, also as root: the launcher drops to a
    # spare uid): a program that forks 100 children gets at most the limit.
    counting = ("import os, time\nn = 0\nfor _ in range(100):\n    try:\n        if os.fork() == 0:\n            time.sleep(3); os._exit(0)\n"
                "        n += 1\n    except OSError:\n        break\nprint(n)\n")
    forked = run_python(counting, Limits(wall_seconds=10, max_processes=16), isolation=bwrap)
    assert int(forked.stdout.strip() or 0) < 16, forked


def test_rm_rf_home_cannot_touch_the_host(bwrap, tmp_path: Path):
    canary = tmp_path / "canary.txt"
    canary.write_text("still here")
    code = ("import os, shutil, subprocess\n"
            "subprocess.run(['rm', '-rf', os.path.expanduser('~') + '/'], check=False)\n"
            f"shutil.rmtree({str(tmp_path)!r})\n")
    r = run_python(code, FAST, isolation=bwrap)
    assert not r.passed and "Read-only file system" in r.stderr
    assert canary.read_text() == "still here"
    assert Path(os.path.expanduser("~")).is_dir()


def test_no_network(bwrap):
    code = "import socket\nsocket.create_connection(('1.1.1.1', 80), timeout=3)\nprint('connected')"
    r = run_python(code, FAST, isolation=bwrap)
    assert not r.passed and "connected" not in r.stdout


def test_private_tmp_and_empty_environment(bwrap):
    os.environ["PTBENCH_SECRET_FOR_TEST"] = "s3cret"
    try:
        r = run_python("import os; open('/tmp/x', 'w').write('1'); print(sorted(os.environ)); print(os.listdir('/tmp'))", FAST, isolation=bwrap)
    finally:
        del os.environ["PTBENCH_SECRET_FOR_TEST"]
    assert r.passed and "PTBENCH_SECRET_FOR_TEST" not in r.stdout and "['x']" in r.stdout


def test_memory_limit(bwrap):
    r = run_python("x = bytearray(8 << 30)", Limits(memory_bytes=512 << 20), isolation=bwrap)
    assert not r.passed and "MemoryError" in r.stderr


def test_output_flood_is_capped_and_harness_keeps_running(bwrap):
    results = run_many(["while True: print('x' * 100000)", "print(1 + 1)"], Limits(wall_seconds=4, cpu_seconds=2, output_bytes=1000), isolation=bwrap)
    assert not results[0].passed and len(results[0].stdout) <= 1000
    assert results[1].passed and results[1].stdout == "2\n"


def test_rlimits_fallback_still_limits_time_and_memory():
    assert run_python("print(2)", FAST, isolation="rlimits").stdout == "2\n"
    assert run_python("while True: pass", FAST, isolation="rlimits").status in ("killed", "timeout")
    assert "MemoryError" in run_python("x = bytearray(8 << 30)", Limits(memory_bytes=512 << 20), isolation="rlimits").stderr
