"""Single-trial commands: `trial run` (what a compute node executes) and `check` (re-run integrity checks).

Registered by `ptbench.cli.main`.
"""

from __future__ import annotations

import typer


def trial_run(trial_dir: str = typer.Argument(..., help="a planned trial directory")) -> None:
    """Run (or resume) one trial: prepare, solve, collect, integrity, evaluate, record."""
    from ptbench.backends.registry import load_job_readers
    from ptbench.runner.pipeline import run_trial

    load_job_readers()  # the attempt and the result record the job this runner runs in
    raise typer.Exit(run_trial(trial_dir))


def check_cmd(
    trial_dir: str = typer.Argument(..., help="a trial directory"),
    only: list[str] = typer.Option(None, "--only", help="run just this check (repeatable)"),
) -> None:
    """Re-run a trial's integrity checks; verdicts and evidence go to its checks/ folder."""
    from ptbench.integrity.recheck import recheck
    from ptbench.results.coverage import verdict_text

    verdicts, reasons, summary = recheck(trial_dir, checks=only or None)
    for name, verdict in verdicts.items():  # not applicable: no method for the task, neither clean nor a fault
        print(f"{name:15} {verdict_text(verdict):14} {reasons.get(name, '')}")
    print(f"evidence: {summary.parent}/<check>.json")
    raise typer.Exit(1 if "flagged" in verdicts.values() else 0)
