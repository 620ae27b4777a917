"""Results commands: `collate` (tables, plots, JSON) and `report` (the static HTML site).

Registered on the root app by `ptbench.cli.main`.
"""

from __future__ import annotations

import typer


def collate(
    targets: list[str] = typer.Argument(
        ..., help="campaign files, their results folders, or any folders of result.json files (several merge)"
    ),
    out: str = typer.Option(None, help="folder for the tables and plots (default: <first campaign>/tables)"),
    policy: str = typer.Option(None, help="base_fallback | exclude | nan (default: the campaign's scoring.policy)"),
    weights: str = typer.Option(
        "auto", help="auto (from instruct and base baselines) | equal | ptb (the published weights) | FILE.json"
    ),
    baselines: list[str] = typer.Option(
        None, help="folder(s) of `ptbench baseline` records (default: results/baselines beside the campaign)"
    ),
    allow_mixed: bool = typer.Option(
        False, "--allow-mixed", help="merge results whose evaluation settings or test sets differ"
    ),
    plots: bool = typer.Option(True, "--plots/--no-plots", help="draw the plots (matplotlib: the slowest part)"),
    compare: list[str] = typer.Option(
        None, "--compare", help="A:B (agent labels; repeatable): paired difference A − B with 95% CI and p-value"
    ),
    ci: bool = typer.Option(False, "--ci", help="a 95% CI on every agent cell (Student t over seeds)"),
    seeds_needed: float = typer.Option(
        None, "--seeds-needed", metavar="WIDTH", help="how many seeds reach a 95% CI this wide (points)"
    ),
    rehearse: bool = typer.Option(False, "--rehearse", help="the campaigns' rehearsals (`run --rehearse`)"),
) -> None:
    """Aggregate results: Markdown on screen; CSV, LaTeX (booktabs), JSON, cost table and plots (PNG, PDF)."""
    from pathlib import Path

    from rich.console import Console
    from rich.markup import escape

    # not ptbench.commands: it imports the runner and the gateway (half a second) that collating never uses
    from ptbench.results.collate import resolve_campaign_dir, write_tables

    if rehearse:
        targets = [str(resolve_campaign_dir(t, rehearse=True)[0]) for t in targets]
    md, files, problems = write_tables(
        targets,
        out,
        plots=plots,
        policy=policy,
        weights=weights,
        allow_mixed=allow_mixed,
        baselines=[Path(b) for b in baselines] if baselines else None,
        compare=compare or None,
        ci=ci,
        seeds_width=seeds_needed,
    )
    console, err_console = Console(), Console(stderr=True)
    for p in problems:
        err_console.print(f"[yellow]warning:[/] {escape(p)}", soft_wrap=True)  # labels may hold [brackets]
    console.print(md, markup=False, highlight=False, soft_wrap=True)
    console.print(f"tables: {', '.join(str(f) for f in files)}", markup=False, highlight=False, soft_wrap=True)


def report(
    targets: list[str] = typer.Argument(..., help="campaign files or results folders (several merge, as in collate)"),
    out: str = typer.Option(None, help="folder for the site (default: <first campaign>/report)"),
    policy: str = typer.Option(None, help="base_fallback | exclude | nan (default: the campaign's scoring.policy)"),
    weights: str = typer.Option("auto", help="auto | equal | ptb | FILE.json (as in collate)"),
    baselines: list[str] = typer.Option(None, help="folder(s) of `ptbench baseline` records"),
    allow_mixed: bool = typer.Option(
        False, "--allow-mixed", help="merge results whose evaluation settings or test sets differ"
    ),
    compare: list[str] = typer.Option(None, "--compare", help="A:B (repeatable): paired comparisons, as in collate"),
    ci: bool = typer.Option(False, "--ci", help="a 95% CI on every agent cell, as in collate"),
    rehearse: bool = typer.Option(False, "--rehearse", help="the campaigns' rehearsals (`run --rehearse`)"),
) -> None:
    """A static HTML site (opens from disk, offline): tables, plots, one page per trial with its trajectory."""
    from pathlib import Path

    from rich.markup import escape

    from ptbench import commands
    from ptbench.results.collate import collate_dirs, write_outputs
    from ptbench.results.report import build_report

    roots = [commands.resolve_campaign_dir(t, rehearse=rehearse)[0] for t in targets]
    result = collate_dirs(
        roots,
        policy=policy,
        weights=weights,
        allow_mixed=allow_mixed,
        baselines=[Path(b) for b in baselines] if baselines else None,
        compare=compare or None,
        ci=ci,
    )
    site = Path(out) if out else roots[0] / "report"
    write_outputs(result, site / "tables")
    index = build_report(result, site, site / "tables")
    for p in result.warnings:
        commands.err_console.print(f"[yellow]warning:[/] {escape(p)}", soft_wrap=True)
    commands.console.print(
        f"report: {index} ({len(result.collation.trials)} trial page(s))", markup=False, highlight=False
    )


def view(
    target: str = typer.Argument(..., help="a campaign's results folder (results/<campaign>) or its campaign file"),
    port: int = typer.Option(
        None, help="port on 127.0.0.1 (default: 7575, or any free one when taken; 0: any free one)"
    ),
    interval: float = typer.Option(2.0, help="seconds between checks for new results"),
) -> None:
    """Serve the report on 127.0.0.1 and rebuild it while the campaign runs; open pages reload themselves."""
    from ptbench.results.report.view import serve

    serve(target, port, interval, lambda line: print(line, flush=True) if line else None)
