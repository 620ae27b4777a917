"""Library calls in a child interpreter with a fixed hash seed (the adapters' shared worker).

Some generators read state that no seed reaches: the order of a set of strings (it follows the
interpreter's hash seed, other in every process), caches warmed by earlier cases, or an unseeded
`random.Random()`. Their cases are made here instead: one child per ptbench process, started on
first use with PYTHONHASHSEED fixed, asked one call a line over pipes. A call with `fork: true` runs
in a fork of the child (each case from the same pristine state, whatever was asked before), with the
global `random` and numpy RNGs seeded by the request's seed and an unseeded `random.Random()`,
`numpy.random.default_rng()` or `random.seed()` seeded from them, and the calendar pinned
(`CASE_CLOCK`), so the case is a function of the seed alone. The calling module's
`prepare_in_worker(*args)`, if it has one, runs in the child before the fork (imports, which every
fork would repeat otherwise).

`LineWorker` is the pipe protocol, shared with mathematics_dataset's worker (another venv's Python).
"""

from __future__ import annotations

import importlib
import json
import os
import random
import subprocess
import sys
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

HASH_SEED = "0"
# The clock a seeded fork sees (time-machine, ticking from there): generators that read the date make
# the same case on every day and in every time zone. reasoning-core's table_qa draws its tables' dates
# with Faker's `date_between("-1y", "today")`: a case made again after midnight had other bytes (CI's
# `verify` of rc.table_qa failed that way; tests/bootcamp/adapters/test_worker.py). Noon, so that no
# case, however slow, runs into the next day; UTC as the zone, so that no machine's zone shifts the date.
CASE_CLOCK = datetime(2025, 6, 1, 12, 0, tzinfo=ZoneInfo("UTC"))


class LineWorker:
    """A child process asked one JSON request a line (one at a time: a lock), restarted if it died.
    `argv()` gives its command line, `env` its environment."""

    def __init__(self, argv: Callable[[], list[str]], env: Callable[[], dict[str, str]], what: str) -> None:
        self.argv, self.env, self.what = argv, env, what
        self.lock = threading.Lock()
        self.proc: subprocess.Popen[str] | None = None

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            if self.proc is None or self.proc.poll() is not None:
                self.proc = subprocess.Popen(self.argv(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,  # noqa: S603
                                             text=True, bufsize=1, env=self.env())  # fmt: skip
            assert self.proc.stdin is not None and self.proc.stdout is not None
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.what}'s worker exited")
        return dict(json.loads(line))


def _env() -> dict[str, str]:
    # the same ptbench (PYTHONPATH kept), the hash seed fixed: set orders are then the same in every process
    return dict(os.environ) | {"PYTHONHASHSEED": HASH_SEED}


_worker = LineWorker(lambda: [sys.executable, "-m", "ptbench.bootcamp.adapters._worker"], _env, "hash-seeded")


def call(function: str, *args: Any, seed: int | None = None) -> Any:
    """`module:function(*args)` in the hash-seeded child (JSON in, JSON out); with `seed`, in a fresh
    fork of it with every global RNG seeded. A failure there is raised here as RuntimeError."""
    reply = _worker.ask({"call": function, "args": list(args), "seed": seed})
    if "error" in reply:
        raise RuntimeError(f"{function}{tuple(args)!r}: {reply['error']}")
    return reply["result"]


def _run(request: dict[str, Any]) -> dict[str, Any]:
    try:
        module, _, name = request["call"].partition(":")
        function = getattr(importlib.import_module(module), name)
        return {"result": function(*request["args"])}
    except Exception as exc:  # noqa: BLE001 - reported to the caller, which names the call
        return {"error": f"{type(exc).__name__}: {exc}"[:2000]}


def _seed_everything(seed: int) -> None:
    import numpy as np
    import time_machine

    # ticking: a library's own deadline (time.time() - t0) still runs out; this fork only
    time_machine.travel(CASE_CLOCK, tick=True).start()

    random.seed(seed)
    np.random.seed(seed % 2**32)
    draw = random.getrandbits

    class SeededRandom(random.Random):
        """`random.Random()` with no seed takes one from the (seeded) global RNG, not from the OS."""

        def __init__(self, x: Any = None) -> None:
            super().__init__(draw(64) if x is None else x)

    random.Random = SeededRandom  # type: ignore[misc]  # this fork only: it ends with the case
    fresh_generator = np.random.default_rng

    def default_rng(seed: Any = None) -> Any:
        """numpy's `default_rng()` with no seed likewise (it would take its seed from the OS)."""
        return fresh_generator(draw(64) if seed is None else seed)

    np.random.default_rng = default_rng  # this fork only, as above
    reseed, reseed_numpy = random.seed, np.random.seed

    def seed_random(a: Any = None, version: int = 2) -> None:
        """`random.seed()` with no seed (gramforge's `generate` calls it, reseeding the global RNG
        from the OS) takes one from the seeded stream instead."""
        reseed(draw(64) if a is None else a, version)

    def seed_numpy(seed: Any = None) -> None:
        reseed_numpy(draw(32) if seed is None else seed)

    random.seed, np.random.seed = seed_random, seed_numpy  # this fork only
    faker = sys.modules.get("faker.generator")
    if faker is not None:  # Faker's shared RNG, made at its import (maybe before the fork) from the OS;
        faker.random.seed(seed)  # seeded apart from the global stream, whose draws must not depend on imports


def _in_fork(request: dict[str, Any]) -> dict[str, Any]:
    module, _, _ = request["call"].partition(":")
    prepare = getattr(importlib.import_module(module), "prepare_in_worker", None)
    if prepare is not None:  # imports done once here, not again in every fork (they draw no case)
        prepare(*request["args"])
    import time_machine  # noqa: F401  (imported once here: 85 ms in every fork otherwise, a case takes 0.1-1 s)

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child ends in os._exit
        os.close(read)
        try:
            _seed_everything(int(request["seed"]))
            reply = _run(request)
            text = json.dumps(reply)
        except BaseException as exc:  # noqa: BLE001 - anything, even a result JSON cannot hold
            text = json.dumps({"error": f"{type(exc).__name__}: {exc}"[:2000]})
        with os.fdopen(write, "w") as out:
            out.write(text)
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as inp:
        text = inp.read()
    os.waitpid(pid, 0)
    return dict(json.loads(text)) if text else {"error": "the case's process died"}


def main() -> None:
    if os.environ.get("PYTHONHASHSEED") != HASH_SEED:  # started by hand: the set orders would not be fixed
        sys.exit(f"run with PYTHONHASHSEED={HASH_SEED} (ptbench starts this worker itself)")
    # replies go to a private copy of stdout; what a library prints goes to stderr, off the protocol
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for line in sys.stdin:
        request = json.loads(line)
        reply = _run(request) if request.get("seed") is None else _in_fork(request)
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


if __name__ == "__main__":
    main()
