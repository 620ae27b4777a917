"""`ptbench doctor`: a table of what is ready on this node and what to fix."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table


def doctor(
    backend: str = typer.Option("local", "--backend", help="local | slurm | htcondor: which scheduler must answer"),
    gpus: int = typer.Option(0, "--gpus", help="GPUs this node must offer (a compute node's check)"),
    sandbox: str = typer.Option("bwrap", "--sandbox", help="bwrap | apptainer: which sandbox must work"),
) -> None:
    """Check a login or compute node: sandboxes, user namespaces, fuse-overlayfs, GPUs, images, caches,
    scheduler, keys."""
    from ptbench.backends.registry import NAMES
    from ptbench.core.errors import UserError
    from ptbench.doctor import run_checks

    if backend not in NAMES:
        raise UserError(f"--backend {backend}: unknown backend ({', '.join(NAMES[:-1])} or {NAMES[-1]})")
    checks = run_checks(backend=backend, gpus=gpus, sandbox=sandbox)
    table = Table(title="ptbench doctor")
    for col in ("", "check", "state", "fix"):
        table.add_column(col, overflow="fold")
    marks = {"ready": "[green]✓[/]", "warn": "[yellow]![/]", "fail": "[red]✗[/]"}
    for c in checks:
        table.add_row(marks[c.status], c.area, c.detail, c.fix)
    console = Console()
    console.print(table)
    failed = [c.area for c in checks if c.status == "fail"]
    console.print(
        f"{len(checks) - len(failed)} of {len(checks)} checks passed"
        + (f"; fix: {', '.join(failed)}" if failed else ""),
        soft_wrap=True,
    )
    if failed:
        raise typer.Exit(1)
