"""`ptbench export harbor CAMPAIGN OUT`: the campaign as Harbor tasks, for Modal, Daytona and other clouds."""

from __future__ import annotations

from pathlib import Path

import typer

app = typer.Typer(no_args_is_help=True)


@app.command()
def harbor(
    campaign: str = typer.Argument(..., help="campaign YAML file"),
    out: Path = typer.Argument(..., help="new folder for the task directories"),
) -> None:
    """One Harbor task directory per (base model, task): task.toml, instruction.md, environment/, tests/."""
    from ptbench.export.harbor import export_harbor, harbor_warnings

    written = export_harbor(campaign, out)
    for t in written:
        print(t)
    for w in harbor_warnings(campaign):
        typer.echo(f"warning: {w}", err=True)
    print(
        f"{len(written)} Harbor task(s) in {out}; run them with e.g. `harbor run -p {out}/<task> -a claude-code -e "
        "modal`"
    )
