"""The stdlib's private multiprocessing API (core/private_multiprocessing.py) on this interpreter."""

from __future__ import annotations

import subprocess
import sys


def test_multiprocessing_helpers_are_stopped() -> None:
    """In a fresh interpreter: start the forkserver and resource tracker, stop them, find them gone."""
    code = (
        "import multiprocessing as mp, psutil\n"
        "from multiprocessing import forkserver, resource_tracker\n"
        "from ptbench.core.private_multiprocessing import stop_multiprocessing_helpers\n"
        "ctx = mp.get_context('forkserver'); p = ctx.Process(target=print); p.start(); p.join()\n"
        "resource_tracker.ensure_running()\n"
        "before = {c.pid for c in psutil.Process().children()}\n"
        "assert len(before) >= 2, before\n"
        "stop_multiprocessing_helpers()\n"
        "left = [c for c in psutil.Process().children() if c.status() != psutil.STATUS_ZOMBIE]\n"
        "assert not left, left\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip().endswith("ok"), out.stderr
