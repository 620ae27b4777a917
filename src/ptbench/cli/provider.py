"""`ptbench provider ...`: run the scripted model provider by hand or from a rehearsal."""

from __future__ import annotations

from pathlib import Path

import typer

from ptbench.core.stopsignals import StopSignals

app = typer.Typer(no_args_is_help=True)


@app.command()
def serve(
    script: Path = typer.Option(..., "--script", help="YAML/JSON script of turns (see ptbench/testing/script.py)."),
    port: int = typer.Option(0, "--port", help="Port on 127.0.0.1; 0 picks a free one."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    record: Path | None = typer.Option(None, "--record", help="Append every (redacted) request to this JSONL file."),
    ready_file: Path | None = typer.Option(None, "--ready-file", help='Write {"base_url": ...} here once listening.'),
) -> None:
    """Serve the Anthropic, OpenAI (Responses, Chat) and Gemini APIs, playing SCRIPT to any caller."""
    # First, before the slow imports: a SIGINT/SIGTERM from here on stops the server, even one that
    # comes before it listens.
    with StopSignals() as stop:
        _serve_until_stopped(stop, script, host, port, record, ready_file)


def _serve_until_stopped(
    stop: StopSignals, script: Path, host: str, port: int, record: Path | None, ready_file: Path | None
) -> None:
    import asyncio

    from rich.console import Console

    from ptbench.core.files import atomic_write_json
    from ptbench.testing.script import load_script
    from ptbench.testing.server import ScriptedProvider

    provider = ScriptedProvider(load_script(script), record_path=record)
    console = Console(stderr=True)

    async def run() -> None:
        if stop.stopped:
            return
        try:
            base = await provider.start(host, port)
            if stop.stopped:
                return
            if ready_file is not None:
                atomic_write_json(ready_file, {"base_url": base})
            console.print(
                f"scripted provider on [bold]{base}[/] ({len(provider.player.script.turns)} turns); Ctrl-C stops"
            )
            await stop.wait()
        finally:
            # Replies held open (delay_s, streams) are cut after the runner's 1 s shutdown_timeout.
            await provider.stop()

    asyncio.run(run())
