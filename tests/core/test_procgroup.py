"""The one process-group stopper (core.procgroup) and the one prctl wrapper (core.prctl), on real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil

from ptbench.core import prctl
from ptbench.core.procgroup import stop_group

# A leader that ignores SIGTERM and a grandchild that outlives it: both must be gone after the stop.
_STUBBORN = """
import os, signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
deaf = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"
child = subprocess.Popen([sys.executable, "-c", deaf])
print(child.pid, flush=True)
time.sleep(600)
"""


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_stop_group_kills_a_leader_that_ignores_sigterm_and_its_child() -> None:
    proc = subprocess.Popen([sys.executable, "-c", _STUBBORN], stdout=subprocess.PIPE, start_new_session=True)
    assert proc.stdout is not None
    grandchild = int(proc.stdout.readline())
    rc = stop_group(proc, grace_s=0.5)
    assert rc == -9 and proc.returncode == -9
    for _ in range(100):
        if _gone(grandchild):
            break
        time.sleep(0.05)
    assert _gone(grandchild)


def test_the_group_is_stopped_even_after_its_leader_exited() -> None:
    code = (
        "import subprocess, sys\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        "print(p.pid, flush=True)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, start_new_session=True)
    assert proc.stdout is not None
    orphan = int(proc.stdout.readline())
    proc.wait()
    assert not _gone(orphan)
    stop_group(proc)
    for _ in range(100):
        if _gone(orphan):
            break
        time.sleep(0.05)
    assert _gone(orphan)


def test_prctl_subreaper_and_dumpable_round_trip_in_a_child() -> None:
    """In a fresh interpreter: the flags are process-wide, and the test runner must keep its own."""
    code = (
        "from ptbench.core import prctl\n"
        "assert prctl.set_child_subreaper(True) and prctl.is_child_subreaper()\n"
        "assert prctl.set_child_subreaper(False) and not prctl.is_child_subreaper()\n"
        "assert prctl.is_dumpable() and prctl.set_dumpable(False) and not prctl.is_dumpable()\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ)
    assert out.stdout.strip() == "ok", out.stderr


def test_parent_death_signal_reaches_the_child_when_its_parent_is_killed() -> None:
    child_code = (
        "import signal, sys, time\n"
        "from ptbench.core import prctl\n"
        "assert prctl.set_parent_death_signal(signal.SIGKILL)\n"
        "print('armed', flush=True)\n"
        "time.sleep(600)\n"
    )
    parent_code = (
        "import subprocess, sys\n"
        f"p = subprocess.Popen([sys.executable, '-c', {child_code!r}], stdout=subprocess.PIPE)\n"
        "print(p.pid, p.stdout.readline().decode().strip(), flush=True)\n"
        "import time; time.sleep(600)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", parent_code], stdout=subprocess.PIPE, start_new_session=True)
    assert parent.stdout is not None
    pid, armed = parent.stdout.readline().split()
    assert armed == b"armed"
    parent.kill()
    parent.wait()
    for _ in range(100):
        if _gone(int(pid)):
            break
        time.sleep(0.05)
    assert _gone(int(pid))
    stop_group(parent)


def test_prctl_answers_minus_one_for_an_unknown_option() -> None:
    assert prctl.prctl(-12345) == -1
