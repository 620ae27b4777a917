"""The standard library's private multiprocessing API, here and nowhere else
(tests/core/test_private_multiprocessing.py checks it on this interpreter).

  stop_multiprocessing_helpers   forkserver._forkserver._stop, resource_tracker._resource_tracker._stop
"""

from __future__ import annotations


def stop_multiprocessing_helpers() -> None:
    """Stop the forkserver and resource tracker this process started, so nothing a process pool
    started outlives it (both restart on demand). The stdlib stops them only at interpreter exit."""
    from multiprocessing import forkserver, resource_tracker

    for holder, attr in ((forkserver, "_forkserver"), (resource_tracker, "_resource_tracker")):
        helper = getattr(holder, attr)
        helper._stop()
