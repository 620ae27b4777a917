"""`ptbench` (the console script) and `python -m ptbench`."""

import signal


def run() -> None:
    """The CLI, with SIGINT and SIGTERM held while it imports. Python raises KeyboardInterrupt wherever
    an import happens to be, and a library's bare `except` there, or importlib's module-lock callback
    (whose exceptions are "ignored"), swallowed it: a server then ran on after Ctrl-C (CI saw it). Held
    until the CLI and its sub-command groups are imported, a signal is taken there, outside any import,
    and the mask this process inherited (a job wrapper's) comes back. A long-running command installs its
    stop handlers before its own slow imports (core/stopsignals.py)."""
    inherited = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    from ptbench.cli import main

    main(restore_mask=inherited)


# Only when run as a program: heavy-tool workers (forkserver, like spawn) import the main module.
if __name__ == "__main__":
    run()
