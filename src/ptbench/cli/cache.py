"""`ptbench cache prefetch|verify`: the agent cache and the evaluation cache of hub models and datasets."""

from __future__ import annotations

import os
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

app = typer.Typer(no_args_is_help=True)
console = Console()


def _agent_home(value: Path | None) -> Path:
    return Path(
        value
        or os.environ.get("PTBENCH_AGENT_HF_HOME")
        or os.environ.get("HF_HOME")
        or Path.home() / ".cache" / "huggingface"
    ).expanduser()


def _eval_home(value: Path | None) -> Path:
    return Path(
        value or os.environ.get("PTBENCH_EVAL_HF_HOME") or Path.home() / ".cache" / "ptbench-eval-hf"
    ).expanduser()


@app.command()
def prefetch(
    resources: Path | None = typer.Argument(
        None, help="JSON list of models and datasets (default: the reference's 14 models and 382 datasets)"
    ),
    cache: Path | None = typer.Option(
        None,
        "--cache",
        help="cache root (an HF_HOME); default $PTBENCH_AGENT_HF_HOME, $HF_HOME, or $PTBENCH_EVAL_HF_HOME with --eval",
    ),
    evaluation: bool = typer.Option(False, "--eval", help="fill the evaluation cache from the evaluation list instead"),
    eval_resources: Path | None = typer.Option(
        None,
        "--eval-resources",
        help="the evaluation list (default: every registered task's held-out data and ptbench's instruct models)",
    ),
    workers: int = typer.Option(8, "--workers", help="parallel file downloads per repository"),
) -> None:
    """Download models and datasets at pinned revisions (resumable; HF_ENDPOINT for a mirror,
    HF_HUB_OFFLINE=1 only checks)."""
    from ptbench.caches.prefetch import human
    from ptbench.caches.prefetch import prefetch as run_prefetch
    from ptbench.caches.resources import agent_resources
    from ptbench.tasks.base import evaluation_list

    eval_list = evaluation_list(eval_resources)
    if evaluation:
        home, todo, exclude = _eval_home(cache), eval_list.resources, None
    else:
        home, todo, exclude = _agent_home(cache), agent_resources(resources), eval_list
    console.print(f"{'evaluation' if evaluation else 'agent'} cache: {home} ({len(todo)} resources)")
    results = run_prefetch(todo, home, eval_list=exclude, max_workers=workers)
    table = Table(title=f"prefetch into {home}")
    for col in ("kind", "repository", "outcome", "commit", "files", "size", "note"):
        table.add_column(col)
    for r in results:
        style = {"downloaded": "green", "skipped": "yellow", "failed": "red"}[r.outcome]
        table.add_row(
            r.resource.kind,
            r.resource.repo,
            f"[{style}]{r.outcome}[/]",
            (r.commit or "")[:12],
            str(r.files) if r.files else "",
            human(r.bytes) if r.bytes else "",
            r.detail,
        )
    console.print(table)
    total = sum(r.bytes for r in results)
    failed = [r for r in results if r.outcome == "failed"]
    console.print(
        f"{sum(r.outcome == 'downloaded' for r in results)} downloaded ({human(total)}), "
        f"{sum(r.outcome == 'skipped' for r in results)} skipped, {len(failed)} failed"
    )
    if failed:
        raise typer.Exit(1)


@app.command()
def verify(
    agent_cache: Path | None = typer.Option(None, "--agent-cache", help="default $PTBENCH_AGENT_HF_HOME or $HF_HOME"),
    eval_cache: Path | None = typer.Option(None, "--eval-cache", help="default $PTBENCH_EVAL_HF_HOME"),
    eval_resources: Path | None = typer.Option(None, "--eval-resources", help="the evaluation list"),
    allow_unchecked: bool = typer.Option(
        False, "--allow-unchecked", help="pass although some evaluation resources are not in the evaluation cache"
    ),
) -> None:
    """Prove the agent cache holds no test-set file, judge reference or instruct model (exit 1 if it does)."""
    from ptbench.caches.verify import verify as run_verify
    from ptbench.tasks.base import evaluation_list

    agent, ev = _agent_home(agent_cache), _eval_home(eval_cache)
    if not agent.is_dir():
        from ptbench.core.errors import UserError

        raise UserError(f"{agent}: no agent cache there; pass --agent-cache DIR or set PTBENCH_AGENT_HF_HOME")
    report = run_verify(agent, ev, evaluation_list(eval_resources))
    for f in report.violations:
        console.print(f"[red]FOUND[/] {f.check}: {f.path} — {f.detail}", soft_wrap=True)
    for f in report.unchecked:
        console.print(f"[yellow]unchecked[/] {f.detail}", soft_wrap=True)
    verdict = "clean" if report.ok(allow_unchecked) else ("NOT CLEAN" if report.violations else "not proven")
    console.print(
        f"agent cache {agent}: {verdict} ({report.files_scanned} files scanned, {report.files_hashed} hashed; "
        f"{len(report.violations)} violation(s), {len(report.unchecked)} unchecked)",
        soft_wrap=True,
    )
    if not report.ok(allow_unchecked):
        raise typer.Exit(1)
