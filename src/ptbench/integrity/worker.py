"""The checks of one trial in one process: `python -m ptbench.integrity.worker CONTEXT_JSON FD CHECK...`.

One process for all of a trial's checks, so the interpreter, ptbench and the libraries the checks
share (torch, transformers, safetensors) load once rather than once per check. The runner
(integrity/runner.py) keeps what per-check processes gave: each check has its own time limit, and a
check that hangs, crashes or raises is killed with the process and is `unchecked`; the checks after
it go on in a fresh process. Each finding goes to the runner through the socket `FD` (one end of
a socket pair, which no other process can open again through /proc as it could a pipe's end) as the
check returns, one JSON line `{"check": NAME, "started_at": T, "seconds": S, "finding": {...}}`;
findings are never read from files, so a check that writes files (another check's output,
`checks/`) changes no verdict. The checks' own prints go to stderr, never into that socket.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from pydantic import ValidationError

from ptbench.core.errors import UserError
from ptbench.integrity.checks import CHECKS, settings_for
from ptbench.integrity.context import CheckContext
from ptbench.integrity.report import Finding, NotApplicable, Unchecked


def run_check(name: str, ctx: CheckContext) -> Finding:
    """The registered check `name` with the campaign's settings for it. `validate` checked both where
    the campaign was submitted; here (a node without the plugin package, a trial.json from another
    version) either failing is `unchecked`, with the reason. Any other exception is left to end the
    process: the runner records it as a crash and starts a fresh one for the remaining checks."""
    try:
        cls = CHECKS.get(name)
        check = cls(settings_for(cls, ctx.config))
    except UserError as exc:
        return Finding(verdict="unchecked", reason=f"cannot be loaded where the check runs: {exc}")
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        return Finding(verdict="unchecked", reason=f"integrity.{name} settings invalid: {problems}")
    try:
        return check.check(ctx)
    except Unchecked as exc:
        return Finding(verdict="unchecked", reason=str(exc))
    except NotApplicable as exc:
        return Finding(verdict="not_applicable", reason=str(exc))


def main(argv: list[str]) -> int:
    from ptbench.trial import TrialDir

    ctx_file, fd, *names = argv
    os.set_inheritable(int(fd), False)  # programs a check starts never get the findings' socket
    report = os.fdopen(int(fd), "w", encoding="utf-8")
    os.dup2(2, 1)  # a check's print() lands in stderr, never among the findings
    raw = json.loads(Path(ctx_file).read_text())
    trial = TrialDir(raw["trial_dir"])
    ctx = CheckContext(
        trial_dir=trial.path,
        spec=trial.spec,
        cache_dirs=[Path(p) for p in raw["cache_dirs"]],
        since=raw["since"],
        layer_dirs=[Path(p) for p in raw.get("layer_dirs", [])],
    )
    for name in names:
        started, clock = time.time(), time.monotonic()
        finding = run_check(name, ctx)
        message = {"check": name, "started_at": started, "seconds": time.monotonic() - clock}
        report.write(json.dumps({**message, "finding": finding.model_dump(mode="json")}) + "\n")
        report.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
