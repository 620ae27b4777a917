from ptbench.cli import main

if (
    __name__ == "__main__"
):  # heavy-tool workers (forkserver, like spawn) import the main module: do not rerun the CLI there
    main()
