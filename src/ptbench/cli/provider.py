"""`ptbench provider ...`: run the scripted model provider by hand or from a rehearsal."""

from __future__ import annotations

from pathlib import Path

import typer

app = typer.Typer(no_args_is_help=True)


@app.command()
def serve(
    script: Path = typer.Option(..., "--script", help="YAML/JSON script of turns (see ptbench/testing/script.py)."),
    port: int = typer.Option(0, "--port", help="Port on 127.0.0.1; 0 picks a free one."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    record: Path | None = typer.Option(None, "--record", help="Append every (redacted) request to this JSONL file."),
    ready_file: Path | None = typer.Option(None, "--ready-file", help="Write {\"base_url\": ...} here once listening."),
) -> None:
    """Serve the Anthropic, OpenAI (Responses, Chat) and Gemini APIs, playing SCRIPT to any caller."""
    import asyncio

    from rich.console import Console

    from ptbench.core.files import atomic_write_json
    from ptbench.testing.script import load_script
    from ptbench.testing.server import ScriptedProvider

    provider = ScriptedProvider(load_script(script), record_path=record)
    console = Console(stderr=True)

    async def run() -> None:
        base = await provider.start(host, port)
        if ready_file is not None:
            atomic_write_json(ready_file, {"base_url": base})
        console.print(f"scripted provider on [bold]{base}[/] ({len(provider.player.script.turns)} turns); Ctrl-C stops")
        try:
            await asyncio.Event().wait()
        finally:
            await provider.stop()

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        pass
