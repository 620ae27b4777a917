"""Campaign commands: `validate`, `plan`, `run`, `submit`, `render`, `status`, `cancel`.

Registered on the root app by `ptbench.cli.main`; heavy imports stay inside the commands.
"""

from __future__ import annotations

import sys

import typer

EXIT_UNSCORED = 1  # `ptbench run`: some trial ended without a scored result (cancelled, failed, …)
_ONE = "One-line run (no campaign file)"
EXIT_PARTIAL = 75  # `ptbench submit` sent part of the campaign; a scheduler limit left the rest (EX_TEMPFAIL)


def validate(
    campaign: str = typer.Argument(..., help="campaign YAML file"),
    rehearse: bool = typer.Option(False, "--rehearse", help="check for a rehearsal (no API keys needed)"),
) -> None:
    """Check a campaign file without creating or submitting anything."""
    from ptbench.validate import validate_campaign

    c, specs = validate_campaign(campaign, rehearse=rehearse)
    print(
        f"{campaign}: ok — {len(specs)} trial(s): {len(c.agents)} agent(s) x {len(c.base_models)} base model(s) x "
        f"{len(c.tasks)} task(s) x {len(c.seeds)} seed(s); backend {c.backend.name}; results in {c.campaign_dir}"
    )


def plan(
    campaign: str = typer.Argument(..., help="campaign YAML file"),
    replace: bool = typer.Option(False, help="move trials whose spec changed aside and plan them anew"),
) -> None:
    """Create the campaign's trial directories (idempotent)."""
    from ptbench import commands

    p = commands.plan(campaign, replace=replace)
    print(
        f"{p.campaign_dir}: {len(p.trials)} trial(s); {len(p.created)} new, {len(p.finished)} finished, "
        f"{len(p.replaced)} replaced"
    )


def run(
    campaign: str = typer.Argument(None, help="campaign YAML file (or none: the one-line flags below)"),
    replace: bool = typer.Option(False, help="replace trials whose spec changed"),
    parallelism: int | None = typer.Option(None, help="override the campaign's parallelism"),
    rehearse: bool = typer.Option(
        False, "--rehearse", help="swap every model provider for the scripted one (campaign <name>-rehearsal)"
    ),
    retry_failed: bool = typer.Option(
        False, "--retry-failed", help="run failed trials again (the earlier attempt moves to .attempts/)"
    ),
    retry_cancelled: bool = typer.Option(
        False, "--retry-cancelled", help="run cancelled trials again (the earlier attempt moves to .attempts/)"
    ),
    agent: list[str] = typer.Option(None, "--agent", help="one-line run: agent (repeatable)", rich_help_panel=_ONE),
    model: str = typer.Option(None, "--model", help="one-line run: base model folder or hub id", rich_help_panel=_ONE),
    task: str = typer.Option(None, "--task", help="one-line run: task (`ptbench list`)", rich_help_panel=_ONE),
    task_options: str = typer.Option(
        None, "--task-options", help="one-line run: task options as JSON", rich_help_panel=_ONE
    ),
    hours: float = typer.Option(None, "--hours", help="one-line run: the agent's budget", rich_help_panel=_ONE),
    gpus: int = typer.Option(None, "--gpus", help="one-line run: GPUs per trial (default 1)", rich_help_panel=_ONE),
    seed: list[int] = typer.Option(
        None, "--seed", help="one-line run: seed (repeatable; default 0)", rich_help_panel=_ONE
    ),
    backend: str = typer.Option(
        None, "--backend", help="one-line run: local (default) | slurm | htcondor", rich_help_panel=_ONE
    ),
    sandbox: str = typer.Option(
        None, "--sandbox", help="one-line run: auto (default) | bwrap | none | apptainer", rich_help_panel=_ONE
    ),
) -> None:
    """Run a campaign on this machine (the local backend), then print the results table. Without a
    campaign file, `--agent A --model M --task T --hours H` makes a one-trial-per-seed campaign. Exit code
    0 when every trial has a scored result (completed or timed_out), 1 when some has not (cancelled,
    failed, no model, …: see `ptbench status`), 2 a user error, 130 interrupted (run again to resume)."""
    from ptbench import commands

    flags = dict(
        agents=agent,
        model=model,
        task=task,
        task_options=task_options,
        hours=hours,
        gpus=gpus,
        seeds=seed,
        backend=backend,
        sandbox=sandbox,
    )
    source = commands.one_line_campaign(campaign, flags)
    from ptbench.backends import get_backend

    # a one-line run on a scheduler (--backend slurm) submits; the local backend runs here
    remote = source is not None and not get_backend(source[0].backend.name, source[0].backend.options).runs_here
    p = commands.plan_checked(source or campaign, replace=replace, rehearse=rehearse, submitting=remote)
    if source is not None:
        commands.console.print(
            f"campaign {p.campaign.name}: results in {p.campaign_dir}", highlight=False, soft_wrap=True
        )
    retry = {
        s
        for flag, kind in ((retry_failed, "failed"), (retry_cancelled, "cancelled"))
        if flag
        for s in commands.RETRY_STATUSES[kind]
    }
    if retry:
        again = commands.retry_finished(p, retry)
        if again:
            commands.console.print(
                f"retrying {len(again)} trial(s); earlier attempts kept in {p.campaign_dir / '.attempts'}",
                highlight=False,
            )
    if remote:
        _submit_planned(p, p.campaign.backend.name, retry_failed=False, again="the same command")
        return
    raise typer.Exit(_run_here(p, parallelism))


def _run_here(p, parallelism: int | None) -> int:
    """Run the plan's unfinished trials on this machine, then print the status and results tables;
    returns the exit code (`_exit_code`)."""
    from ptbench import commands

    todo = p.unfinished
    if todo:
        _run_local(p, todo, parallelism)
    else:
        commands.console.print(f"{p.campaign_dir.name}: all {len(p.trials)} trial(s) finished; nothing to run")
    commands.print_status(p.campaign_dir, commands.status_rows(p.campaign_dir))
    if not any(t.result_json.exists() for t in p.trials):
        commands.console.print("no results yet: see the failures above (`ptbench status`), fix them and run again")
        return _exit_code(p)
    md, files, problems = commands.write_tables(str(p.campaign_dir), None, allow_mixed=True)  # differences warn here
    from rich.markup import escape

    for problem in problems:
        commands.err_console.print(
            f"[yellow]warning:[/] {escape(problem)}", soft_wrap=True
        )  # labels may hold [brackets]
    commands.console.print(md, markup=False, highlight=False, soft_wrap=True)  # labels like [unsandboxed] are text
    commands.console.print(f"tables: {', '.join(str(f) for f in files)}")
    return _exit_code(p)


def _run_local(p, todo, parallelism) -> None:
    from ptbench import commands
    from ptbench.backends.local import LocalBackend
    from ptbench.cli.run_progress import RunDisplay

    with RunDisplay(commands.console, p.campaign_dir.name, len(todo)) as display:
        LocalBackend().submit(p, todo, parallelism=parallelism, progress=display.done, tick=display.tick)


def _exit_code(p) -> int:
    """`run`'s exit code (docs/campaigns.md): 0 when every trial has a scored result, else EXIT_UNSCORED."""
    from ptbench.results.policy import SCORED_STATUSES

    statuses = [(t.read_result() or {}).get("status") for t in p.trials]
    return 0 if all(s in SCORED_STATUSES for s in statuses) else EXIT_UNSCORED


def submit(
    campaign: str = typer.Argument(..., help="campaign YAML file"),
    backend: str = typer.Option(None, help="local | slurm | htcondor (default: the campaign's)"),
    replace: bool = typer.Option(False, help="replace trials whose spec changed"),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="also resubmit trials that failed retryably"),
    rehearse: bool = typer.Option(
        False, "--rehearse", help="swap every model provider for the scripted one (campaign <name>-rehearsal)"
    ),
) -> None:
    """Submit a campaign's unfinished trials to a scheduler (the whole campaign is validated first)."""
    from ptbench import commands

    p = commands.plan_checked(campaign, replace=replace, rehearse=rehearse, submit_to=backend, submitting=True)
    _submit_planned(
        p, backend or p.campaign.backend.name, retry_failed=retry_failed, again=f"`ptbench submit {campaign}`"
    )


def _submit_planned(p, name: str, *, retry_failed: bool, again: str) -> None:
    """Send the plan's submittable trials to backend `name` (run them here for the local backend)."""
    from ptbench import commands
    from ptbench.backends import get_backend

    chosen = get_backend(name, p.campaign.backend.options if name == p.campaign.backend.name else {})
    if chosen.runs_here:  # the local backend: run here, with the plan just made
        raise typer.Exit(_run_here(p, None))
    # Trials whose job is still queued or running are not submitted twice (one scheduler call).
    live = {}
    if (p.campaign_dir / "jobs.json").exists():
        live = chosen.scheduler_states(p.campaign_dir, p.unfinished, strict=True)
    todo = commands.submittable(p, retry_failed=retry_failed, scheduler_states=live)
    if not todo:
        print(
            f"{p.campaign_dir.name}: nothing to submit ({len(p.finished)} finished, the rest queued, running or failed"
            f"{'' if retry_failed else '; --retry-failed resubmits retryable failures'})"
        )
        return
    done = chosen.submit(p, todo)
    print(
        f"{p.campaign_dir.name}: submitted {done.units} trial(s) to {name}"
        + (f" as {done.describe()}" if done.job_ids else "")
        + f"; follow with `ptbench status {p.campaign_dir}`"
    )
    if done.left:
        print(
            f"{p.campaign_dir.name}: {done.left} trial(s) left: the scheduler refused them ({done.refused}); "
            f"run {again} again when jobs have left the queue (queued ones are not sent twice)",
            file=sys.stderr,
        )
        raise typer.Exit(EXIT_PARTIAL)


def render(
    campaign: str = typer.Argument(..., help="campaign YAML file"),
    backend: str = typer.Option(None, help="slurm | htcondor (default: the campaign's)"),
    out: str = typer.Option(None, help="file to write (default: <campaign>/submit/<backend>.*)"),
) -> None:
    """Write the exact submit script/description that `submit` would use, without submitting."""
    from ptbench.backends import get_backend
    from ptbench.validate import validate_campaign

    c, specs = validate_campaign(campaign, agents_can_start=False)  # rendering needs no keys
    name = backend or c.backend.name
    path = get_backend(name, c.backend.options if name == c.backend.name else {}).render(c, specs, out)
    print(path)


def status(
    target: str = typer.Argument(..., help="campaign file, its results folder, or a bootcamp rollout folder"),
    watch: bool = typer.Option(False, "--watch", help="refresh the table in place until every trial is final"),
    interval: float = typer.Option(5.0, help="seconds between refreshes with --watch"),
    rehearse: bool = typer.Option(False, "--rehearse", help="the campaign's rehearsal (`run --rehearse`)"),
) -> None:
    """A table of every trial's (or rollout shard's) state, stage, time used and score."""
    from ptbench import commands
    from ptbench.backends import get_backend
    from ptbench.plan import load_plan

    cdir, campaign = commands.resolve_campaign_dir(target, rehearse=rehearse)
    if (cdir / "rollout.json").exists():  # a bootcamp rollout: its shards, like trials
        from ptbench.rollout_launcher.shards import shard_status_rows
        from ptbench.status import TrialStatus

        def rows_of_shards() -> list[TrialStatus]:
            return shard_status_rows(cdir)

        if watch:
            from ptbench.cli.watch import watch_status

            raise typer.Exit(watch_status(cdir, rows_of_shards, interval))
        commands.print_status(cdir, rows_of_shards())
        return
    backend = get_backend(_backend_of(cdir, campaign))

    def rows():
        states = backend.scheduler_states(cdir, load_plan(cdir)) if not backend.runs_here else {}
        return commands.status_rows(cdir, states, backend)

    if watch:
        from ptbench.cli.watch import watch_status

        raise typer.Exit(watch_status(cdir, rows, interval))
    commands.print_status(cdir, rows())
    from ptbench.backends.jobs import JobsFile

    left = [u for u in (getattr(JobsFile.load(cdir), "left", None) or []) if not (cdir / u / "result.json").exists()]
    if left:
        commands.console.print(
            f"{len(left)} trial(s) not submitted yet (a scheduler limit refused them): `ptbench submit` sends them"
        )


def _backend_of(cdir, campaign) -> str:
    from ptbench.backends.jobs import JobsFile

    jobs = JobsFile.load(cdir)
    if jobs is not None:
        return jobs.backend
    return campaign.backend.name if campaign else "local"


def cancel(
    target: str = typer.Argument(..., help="campaign file or its results folder"),
    trials: list[str] = typer.Argument(None, help="trial ids (default: every unfinished trial)"),
    rehearse: bool = typer.Option(False, "--rehearse", help="the campaign's rehearsal (`run --rehearse`)"),
) -> None:
    """Stop trials cleanly: their processes end and their results say `cancelled`."""
    import time

    from ptbench import commands
    from ptbench.backends import get_backend

    cdir, campaign = commands.resolve_campaign_dir(target, rehearse=rehearse)
    chosen = [t for t in commands.select_trials(cdir, trials) if not t.result_json.exists()]
    if not chosen:
        print(f"{cdir.name}: nothing to cancel (every selected trial has finished)")
        return
    backend = get_backend(_backend_of(cdir, campaign))
    backend.cancel(cdir, chosen)
    deadline = time.monotonic() + 120
    waiting = list(chosen)
    while waiting and time.monotonic() < deadline:
        waiting = [t for t in waiting if not commands.record_cancelled_if_idle(t)]
        if waiting:
            time.sleep(0.5)
    print(
        f"{cdir.name}: cancelled {len(chosen) - len(waiting)} trial(s)"
        + (f"; still stopping: {', '.join(t.id for t in waiting)}" if waiting else "")
    )
