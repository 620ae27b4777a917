"""The `ptbench` command line: thin; parses arguments, calls the modules, prints with rich.

This module holds the root app, the entry point and the lazily added sub-command groups; the commands
live by topic in `cli.campaign`, `cli.trial`, `cli.results` and `cli.evaluate` and are registered here.

Heavy libraries (torch, transformers, vllm, submitit, htcondor) are imported inside the commands
that need them, so `ptbench trial run` starts the agent quickly.
"""

from __future__ import annotations

import signal
import sys

import typer

from ptbench.cli import campaign, evaluate, results, trial  # the commands, by topic
from ptbench.core.errors import UserError
from ptbench.core.procsec import make_not_dumpable

HELP = (
    "ptbench runs LLM post-training trials (a coding agent post-trains a base model under a hard wall-clock budget; "
    "the harness checks and evaluates what it leaves) and agentic rollouts, on Slurm, HTCondor or this machine, "
    "and turns the results into tables for papers."
)
app = typer.Typer(no_args_is_help=True, add_completion=False, help=HELP)


def _print_version(value: bool) -> None:
    if value:
        from ptbench import __version__

        print(f"ptbench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="print ptbench's version and exit"
    ),
) -> None:
    """The options every command shares (`--debug` is taken before parsing: main)."""


trial_app = typer.Typer(no_args_is_help=True, help="Run one trial (what a compute node executes).")
app.add_typer(trial_app, name="trial")


# Registered here, in the order `ptbench --help` lists them.
app.command()(campaign.validate)
app.command()(campaign.plan)
app.command()(campaign.run)
app.command()(campaign.submit)
app.command()(campaign.render)
app.command()(campaign.status)
app.command()(campaign.cancel)
app.command()(results.collate)
app.command()(results.report)
app.command()(results.view)
trial_app.command("run")(trial.trial_run)
app.command("check")(trial.check_cmd)
app.command("eval")(evaluate.eval_cmd)
app.command("eval-references")(evaluate.eval_references_cmd)
app.command()(evaluate.baseline)


@app.command("make-tiny-model")
def make_tiny_model_cmd(path: str = typer.Argument(..., help="folder to write the model to")) -> None:
    """Create the demo's random tiny Llama and tokenizer locally (no download)."""
    from ptbench.demo import make_tiny_model

    print(make_tiny_model(path))


@app.command("list")
def list_cmd() -> None:
    """Known agents and tasks."""
    from ptbench.agents import available_agents
    from ptbench.tasks import available_tasks

    print("agents: " + ", ".join(available_agents()))
    print("tasks:  " + ", ".join(available_tasks()))


SUBAPPS = ("bootcamp", "provider", "doctor", "export", "cache", "selftest")


def _register_subapps(args: list[str]) -> None:
    """Add the sub-command groups, unless the command line names a command of this module: importing
    them costs a quarter of a second that `ptbench collate` and the other commands here never use."""
    first = next((a for a in args if not a.startswith("-")), None)
    own = {str(c.name or getattr(c.callback, "__name__", "")).replace("_", "-") for c in app.registered_commands}
    if first in own - set(SUBAPPS) or first in {g.name for g in app.registered_groups}:
        return
    from ptbench.cli.bootcamp import app as bootcamp_app
    from ptbench.cli.cache import app as cache_app
    from ptbench.cli.doctor import doctor
    from ptbench.cli.export import app as export_app
    from ptbench.cli.provider import app as provider_app
    from ptbench.cli.selftest import app as selftest_app

    app.add_typer(
        bootcamp_app, name="bootcamp", help="Programmable environments: generate data, roll out, merge traces."
    )
    app.add_typer(provider_app, name="provider", help="The scripted model provider (tests and rehearsals).")
    app.command("doctor")(doctor)
    app.add_typer(export_app, name="export", help="Export a campaign for other runners (Harbor tasks).")
    app.add_typer(
        cache_app,
        name="cache",
        help="Hub caches: prefetch models and datasets, verify the agent cache holds no evaluation data.",
    )
    app.add_typer(
        selftest_app, name="selftest", help="Self-tests: the integrity checks against the project's own attacks."
    )


def main(argv: list[str] | None = None, *, restore_mask: set[int | signal.Signals] | None = None) -> None:
    """Console entry point: user errors become one line on stderr and exit code 2.

    `restore_mask`: the signal mask to set once the sub-command groups are imported (`ptbench` and
    `python -m ptbench` hold SIGINT and SIGTERM through the imports: `ptbench.__main__.run`)."""
    # First of all: every ptbench process may hold the keys of the job's environment or .env
    # (`ptbench run` before it spawns runners, the runner, `ptbench provider`); non-dumpable, its
    # /proc/PID/environ and memory are closed to a same-uid agent. No agent exists yet at this point.
    make_not_dumpable()
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    if debug:
        args.remove("--debug")
    try:
        _register_subapps(args)
        if restore_mask is not None:  # a signal held until now is taken here, outside any import
            signal.pthread_sigmask(signal.SIG_SETMASK, restore_mask)
        rc = app(args=args, standalone_mode=False)  # click returns typer.Exit's code here
        if isinstance(rc, int) and rc:
            sys.exit(rc)
    except UserError as exc:
        if debug:
            raise
        # one line a problem (validate lists every problem of a campaign at once)
        print("\n".join(f"error: {line}" for line in str(exc).splitlines() or [""]), file=sys.stderr)
        sys.exit(exc.exit_code)
    except SystemExit:
        raise
    except Exception as exc:  # click's own usage errors
        errors, aborts = _click_exceptions()
        if isinstance(exc, errors):
            exc.show()  # type: ignore[attr-defined]  # every ClickException has show()
            sys.exit(2)
        if isinstance(exc, aborts):
            sys.exit(130)
        raise


def _click_exceptions() -> tuple[tuple[type[Exception], ...], tuple[type[Exception], ...]]:
    """(usage errors, aborts) as click's classes and as those of the click copy typer carries (typer
    0.2x vendors click: its usage errors are not click's, and a usage mistake would end in a traceback).
    The copy's classes are found through typer's public BadParameter and Abort, not its private module."""
    import click

    errors: list[type[Exception]] = [click.exceptions.ClickException]
    errors += [k for k in typer.BadParameter.__mro__ if k.__name__ == "ClickException" and issubclass(k, Exception)]
    return tuple(errors), (click.exceptions.Abort, typer.Abort)


if __name__ == "__main__":
    main()
