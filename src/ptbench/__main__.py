import signal

if __name__ == "__main__":
    # `python -m ptbench`: a SIGINT or SIGTERM that comes while the CLI imports is held, not lost. Python
    # raises KeyboardInterrupt wherever an import happens to be, and a library's bare `except` there
    # swallowed it (a server then ran on after Ctrl-C: CI saw it). Held until the imports are done, it is
    # taken below, outside any library; the mask this process inherited (a job wrapper's) comes back.
    _inherited = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})

from ptbench.cli import main  # noqa: E402

if (
    __name__ == "__main__"
):  # heavy-tool workers (forkserver, like spawn) import the main module: do not rerun the CLI there
    signal.pthread_sigmask(signal.SIG_SETMASK, _inherited)
    main()
