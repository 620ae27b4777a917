"""The command line, the top layer: `main` (the root app; its commands in `campaign`, `trial`, `results`,
`evaluate`), `bootcamp`, `provider`, `cache`, `doctor`, `export`."""

from ptbench.cli.main import app, main

__all__ = ["app", "main"]
