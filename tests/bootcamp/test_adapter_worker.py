"""The adapters' hash-seeded worker (bootcamp/adapters/_worker.py): a case made there is a function of
its seed alone, whatever the caller's hash seed, the calls before it or the OS's entropy, which is
what makes reasoning-core's and five reasoning-gym generators reproducible across processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ptbench.bootcamp.adapters import _worker

REPO = Path(__file__).resolve().parents[2]
PROBE = "tests.bootcamp._worker_probe"


def _fresh() -> _worker.LineWorker:
    # its own child, started in the repo (the probe module is imported there by name)
    argv = [sys.executable, "-m", "ptbench.bootcamp.adapters._worker"]
    return _worker.LineWorker(lambda: argv, _worker._env, "test")


@pytest.fixture
def worker(monkeypatch: pytest.MonkeyPatch) -> _worker.LineWorker:
    monkeypatch.chdir(REPO)
    w = _fresh()
    yield w
    if w.proc is not None:
        w.proc.stdin.close()  # type: ignore[union-attr]
        w.proc.wait(timeout=30)


def test_a_seeded_call_is_the_same_whatever_came_before_and_in_another_worker(worker: _worker.LineWorker) -> None:
    req = {"call": f"{PROBE}:state", "args": ["k"], "seed": 7}
    first = worker.ask(req)["result"]
    worker.ask({"call": f"{PROBE}:state", "args": ["other"], "seed": 8})  # another case in between
    again = worker.ask(req)["result"]
    other = _fresh()
    try:
        elsewhere = other.ask(req)["result"]
    finally:
        assert other.proc is not None and other.proc.stdin is not None
        other.proc.stdin.close()
        other.proc.wait(timeout=30)
    assert first == again == elsewhere
    assert first["earlier_calls"] == 1  # each case in a fork of the pristine worker: no cache carried over
    assert worker.ask({"call": f"{PROBE}:state", "args": ["k"], "seed": 8})["result"] != first  # the seed matters


def test_an_unseeded_call_runs_in_the_worker_itself(worker: _worker.LineWorker) -> None:
    """Without a seed (reasoning-gym's items: their own seeded RNG) calls share the worker's state,
    which is what lets them reuse its caches; the set order is still the fixed hash seed's."""
    a = worker.ask({"call": f"{PROBE}:state", "args": ["k"], "seed": None})["result"]
    b = worker.ask({"call": f"{PROBE}:state", "args": ["k"], "seed": None})["result"]
    assert (a["earlier_calls"], b["earlier_calls"]) == (1, 2)
    assert a["set_order"] == b["set_order"]


def test_the_set_order_is_the_fixed_hash_seeds_not_the_callers(worker: _worker.LineWorker) -> None:
    got = worker.ask({"call": f"{PROBE}:state", "args": ["k"], "seed": 1})["result"]["set_order"]
    code = "print(__import__('json').dumps(list({f'k{i}' for i in range(8)})))"
    for hash_seed in (_worker.HASH_SEED, "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = json.loads(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                        check=True).stdout)  # fmt: skip
        assert (out == got) == (hash_seed == _worker.HASH_SEED)  # another hash seed orders the set otherwise


def test_failures_and_prints_stay_off_the_protocol(worker: _worker.LineWorker) -> None:
    assert worker.ask({"call": f"{PROBE}:shout", "args": [], "seed": 3}) == {"result": "ok"}
    assert worker.ask({"call": f"{PROBE}:shout", "args": [], "seed": None}) == {"result": "ok"}
    reply = worker.ask({"call": f"{PROBE}:no_such_function", "args": [], "seed": 3})
    assert "AttributeError" in reply["error"]
    with pytest.raises(RuntimeError, match="no_such"):
        _worker.call(f"{PROBE}:no_such_function")


def test_started_by_hand_without_the_hash_seed_it_refuses() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    proc = subprocess.run([sys.executable, "-m", "ptbench.bootcamp.adapters._worker"], env=env, input="",
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode != 0 and "PYTHONHASHSEED" in proc.stderr
