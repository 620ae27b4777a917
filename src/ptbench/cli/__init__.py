"""The command line, the top layer: `main` (trials, campaigns, results), `bootcamp`, `provider`."""

from ptbench.cli.main import app, main

__all__ = ["app", "main"]
