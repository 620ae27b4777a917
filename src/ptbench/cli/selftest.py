"""`ptbench selftest integrity`: the project's own attacks against its integrity checks, with honest
controls, through the real checks; a recall and false-positive table per check and benchmark."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import typer

app = typer.Typer(no_args_is_help=True)


@app.command()
def integrity(
    quick: bool = typer.Option(False, "--quick", help="the small form CI runs (a few minutes on 2 CPU cores)"),
    json_file: Path | None = typer.Option(None, "--json", help="also write the table and every run to this file"),
    record: bool = typer.Option(
        False, "--record", help="rewrite the recorded table (ptbench/integrity/selftest/recorded.json) with this run's"
    ),
    against: bool = typer.Option(
        False, "--check-against-recorded", help="exit 1, one line per cell, if a cell fell below the recorded table"
    ),
    recorded: Path | None = typer.Option(
        None, "--recorded", help="the recorded table to compare with or rewrite (default: the one ptbench ships)"
    ),
    checks: list[str] = typer.Option([], "--check", help="only this check (repeat for more)"),
    keep: Path | None = typer.Option(None, "--keep", help="keep the trial directories in this folder"),
) -> None:
    """Run the scripted attacks and honest controls against every check; print recall and false positives."""
    from ptbench.core.errors import UserError
    from ptbench.core.files import atomic_write_text
    from ptbench.integrity import selftest
    from ptbench.runner.journal import run_journal

    unknown = [c for c in checks if c not in selftest.CHECKS]
    if unknown:
        raise UserError(
            f"--check {unknown[0]}: not a check the self-test runs; use one of {', '.join(selftest.CHECKS)}"
        )
    if record and checks:
        raise UserError("--record with --check would drop the other checks' cells: record a whole run (no --check)")
    mode = "quick" if quick else "full"
    todo = selftest.select(quick=quick, checks=checks or None)
    print(f"integrity self-test ({mode}): {len(todo)} runs", file=sys.stderr)
    started = time.time()
    outcomes = selftest.run(
        todo, quick=quick, workdir=keep, progress=lambda m: print(m, file=sys.stderr, flush=True), journal=run_journal
    )
    rep = selftest.report(outcomes, quick=quick)
    print(f"{len(outcomes)} runs in {time.time() - started:.0f} s", file=sys.stderr)
    table = selftest.cells(outcomes)
    print(selftest.render(table, title=f"Integrity self-test ({mode}, ptbench {rep['harness_version']})"), end="")
    if json_file is not None:
        atomic_write_text(json_file, json.dumps(rep, indent=1) + "\n")
        print(f"json: {json_file}", file=sys.stderr)
    failed = False
    if against:
        before = selftest.recorded(mode, recorded or selftest.RECORDED)
        if checks:
            before = [c for c in before if c.check in checks]
        if not before:
            print(f"no recorded {mode} table to compare with: run with --record", file=sys.stderr)
            failed = True
        for line in selftest.regressions(table, before):
            print(f"below recorded: {line}")
            failed = True
    if record:
        selftest.record(rep, recorded or selftest.RECORDED)
        print(f"recorded the {mode} table in {recorded or selftest.RECORDED}", file=sys.stderr)
    if failed:
        raise typer.Exit(1)
