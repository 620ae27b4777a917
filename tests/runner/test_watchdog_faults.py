"""The watchdog still stops the agent when persisting progress fails (full disk) or the harness errs.

Run in a child Python process: the watchdog kills every descendant of the process it runs in,
which must not be pytest itself.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import psutil

SCRIPT = textwrap.dedent("""
    import errno, sys
    from ptbench.runner.watchdog import Watchdog

    mode = sys.argv[1]
    def on_tick(elapsed):
        raise OSError(errno.EDQUOT, "Disk quota exceeded")
    def on_event(kind, **kw):
        if mode == "bug" and kind == "warned":
            raise RuntimeError("harness bug")
    wd = Watchdog(
        seconds_left=2,
        grace_seconds=1,
        warn_before=1,
        on_tick=on_tick if mode == "disk" else (lambda e: None),
        on_event=on_event,
    )
    argv = ["bash", "-c", "echo $$ > " + sys.argv[2] + "; trap '' TERM; sleep 60"]
    try:
        out = wd.run(argv, cwd=".", env={"PATH": "/usr/bin:/bin"}, stdout=None, stderr=None)
    except Exception as exc:
        print("raised", type(exc).__name__)
    else:
        print("timed_out", out.timed_out)
""")


def _run(mode: str, tmp_path) -> tuple[str, int]:
    pid_file = tmp_path / f"{mode}.pid"
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, mode, str(pid_file)], capture_output=True, text=True, timeout=60
    )
    return out.stdout.strip(), int(pid_file.read_text())


def test_full_disk_during_the_watch_still_enforces_the_deadline(tmp_path):
    stdout, agent = _run("disk", tmp_path)
    # progress could not be saved, but the deadline held; the final save's error surfaces to the runner
    assert stdout == "raised OSError"
    assert not psutil.pid_exists(agent)


def test_a_harness_error_during_the_watch_still_kills_the_agent(tmp_path):
    stdout, agent = _run("bug", tmp_path)
    assert stdout == "raised RuntimeError"
    assert not psutil.pid_exists(agent)
