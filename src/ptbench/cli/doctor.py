"""`ptbench doctor [CAMPAIGN]`: a table of what is ready on this node and what to fix."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text


def doctor(
    campaign: str = typer.Argument(
        None, help="campaign YAML file: check its backend's client, its agents' CLIs and keys (default: every agent)"
    ),
    backend: str = typer.Option(
        None,
        "--backend",
        help="a registered backend (local, slurm, htcondor, a plugin's): which scheduler must answer "
        "(default: the campaign's, else local)",
    ),
    gpus: int = typer.Option(0, "--gpus", help="GPUs this node must offer (a compute node's check)"),
    sandbox: str = typer.Option("bwrap", "--sandbox", help="bwrap | apptainer: which sandbox must work"),
) -> None:
    """Check a login or compute node: sandboxes, user namespaces, fuse-overlayfs, GPUs, images, caches,
    scheduler and its client library, agent CLIs, keys. Exit 1 when a check failed."""
    from ptbench.backends.registry import check_backend_name
    from ptbench.doctor import run_checks, summary

    agents, options = None, {}
    if campaign is not None:
        from ptbench.validate import validate_campaign

        c, _ = validate_campaign(campaign, agents_can_start=False)  # what cannot start is what doctor reports
        backend = backend or c.backend.name
        agents = [(a.name, a.model, a.options) for a in c.agents]
        options = c.backend.options if backend == c.backend.name else {}
    backend = backend or "local"
    check_backend_name(backend, f"--backend {backend}")
    checks = run_checks(backend=backend, gpus=gpus, sandbox=sandbox, agents=agents, backend_options=options)
    # Three columns, the fix under the finding: readable at 80 columns.
    table = Table(title="ptbench doctor", expand=True)
    table.add_column("", no_wrap=True)
    table.add_column("check", overflow="fold", ratio=1)
    table.add_column("finding / fix", overflow="fold", ratio=3)
    marks = {"ready": Text("✓", "green"), "warn": Text("!", "yellow"), "fail": Text("✗", "red")}
    for ch in checks:
        finding = Text(ch.detail)  # text, never markup: details hold paths and tool output
        if ch.fix:
            finding.append(f"\nfix: {ch.fix}", style="dim" if ch.status == "ready" else "bold")
        table.add_row(marks[ch.status], ch.area, finding)
    console = Console()
    console.print(table)
    console.print(summary(checks), soft_wrap=True, markup=False, highlight=False)
    if any(ch.status == "fail" for ch in checks):
        raise typer.Exit(1)
