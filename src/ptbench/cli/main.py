"""The `ptbench` command line: thin; parses arguments, calls the modules, prints with rich.

Heavy libraries (torch, transformers, vllm, submitit, htcondor) are imported inside the commands
that need them, so `ptbench trial run` starts the agent quickly.
"""

from __future__ import annotations

import sys

import typer

from ptbench.core.errors import UserError
from ptbench.core.procsec import make_not_dumpable

HELP = (
    "ptbench runs LLM post-training trials (a coding agent post-trains a base model under a hard wall-clock budget; "
    "the harness checks and evaluates what it leaves) and agentic rollouts, on Slurm, HTCondor or this machine, "
    "and turns the results into tables for papers."
)
app = typer.Typer(no_args_is_help=True, add_completion=False, help=HELP)
EXIT_PARTIAL = 75  # `ptbench submit` sent part of the campaign; a scheduler limit left the rest (EX_TEMPFAIL)


trial_app = typer.Typer(no_args_is_help=True, help="Run one trial (what a compute node executes).")
app.add_typer(trial_app, name="trial")


@app.command()
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


@app.command()
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


@app.command()
def run(
    campaign: str = typer.Argument(..., help="campaign YAML file"),
    replace: bool = typer.Option(False, help="replace trials whose spec changed"),
    parallelism: int | None = typer.Option(None, help="override the campaign's parallelism"),
    rehearse: bool = typer.Option(
        False, "--rehearse", help="swap every model provider for the scripted one (campaign <name>-rehearsal)"
    ),
) -> None:
    """Run a campaign on this machine (the local backend), then print the results table."""
    _run_here(_plan_checked(campaign, replace=replace, rehearse=rehearse), parallelism)


def _run_here(p, parallelism: int | None) -> None:
    """Run the plan's unfinished trials on this machine, then print the status and results tables."""
    from ptbench import commands

    todo = p.unfinished
    if todo:
        _run_local(p, todo, parallelism)
    else:
        commands.console.print(f"{p.campaign_dir.name}: all {len(p.trials)} trial(s) finished; nothing to run")
    commands.print_status(p.campaign_dir, commands.status_rows(p.campaign_dir))
    if not any(t.result_json.exists() for t in p.trials):
        commands.console.print("no results yet: see the failures above (`ptbench status`), fix them and run again")
        return
    md, files, problems = commands.write_tables(str(p.campaign_dir), None, allow_mixed=True)  # differences warn here
    from rich.markup import escape

    for problem in problems:
        commands.err_console.print(
            f"[yellow]warning:[/] {escape(problem)}", soft_wrap=True
        )  # labels may hold [brackets]
    commands.console.print(md, markup=False, highlight=False, soft_wrap=True)  # labels like [unsandboxed] are text
    commands.console.print(f"tables: {', '.join(str(f) for f in files)}")


def _plan_checked(campaign_file: str, *, replace: bool, rehearse: bool):
    """Plan after checking that every agent can start (keys, logins, CLIs); a rehearsal plans <name>-rehearsal."""
    from pathlib import Path

    from ptbench import commands
    from ptbench.agents.rehearsal import rehearsal_campaign
    from ptbench.plan import plan_campaign
    from ptbench.validate import validate_campaign

    c, _ = validate_campaign(campaign_file, rehearse=rehearse)
    if not rehearse:
        return commands.plan(campaign_file, replace=replace, validated=c)
    return plan_campaign(rehearsal_campaign(c), replace=replace, source=str(Path(campaign_file).resolve()))


def _run_local(p, todo, parallelism) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ptbench import commands
    from ptbench.backends.local import LocalBackend
    from ptbench.status import trial_status

    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=commands.console,
    ) as progress:
        bar = progress.add_task(f"{p.campaign_dir.name}", total=len(todo))

        def done(trial, code):
            st = trial_status(trial)
            progress.console.print(f"  {trial.id}: {st.state} {st.metric}".rstrip())
            progress.advance(bar)

        LocalBackend().submit(p, todo, parallelism=parallelism, progress=done)


@app.command()
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
    from ptbench.backends import get_backend

    p = _plan_checked(campaign, replace=replace, rehearse=rehearse)
    name = backend or p.campaign.backend.name
    chosen = get_backend(name, p.campaign.backend.options if name == p.campaign.backend.name else {})
    if chosen.runs_here:  # the local backend: run here, with the plan just made
        _run_here(p, None)
        return
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
            f"run `ptbench submit {campaign}` again when jobs have left the queue (queued ones are not sent twice)",
            file=sys.stderr,
        )
        raise typer.Exit(EXIT_PARTIAL)


@app.command()
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


@app.command()
def status(
    target: str = typer.Argument(..., help="campaign file, its results folder, or a bootcamp rollout folder"),
    watch: bool = typer.Option(False, "--watch", help="refresh the table in place until every trial is final"),
    interval: float = typer.Option(5.0, help="seconds between refreshes with --watch"),
) -> None:
    """A table of every trial's (or rollout shard's) state, stage, time used and score."""
    from ptbench import commands
    from ptbench.backends import get_backend
    from ptbench.plan import load_plan

    cdir, campaign = commands.resolve_campaign_dir(target)
    if (cdir / "rollout.json").exists():  # a bootcamp rollout: its shards, like trials
        from ptbench.backends.shards import shard_status_rows
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


@app.command()
def cancel(
    target: str = typer.Argument(..., help="campaign file or its results folder"),
    trials: list[str] = typer.Argument(None, help="trial ids (default: every unfinished trial)"),
) -> None:
    """Stop trials cleanly: their processes end and their results say `cancelled`."""
    import time

    from ptbench import commands
    from ptbench.backends import get_backend

    cdir, campaign = commands.resolve_campaign_dir(target)
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


@app.command()
def collate(
    targets: list[str] = typer.Argument(
        ..., help="campaign files, their results folders, or any folders of result.json files (several merge)"
    ),
    out: str = typer.Option(None, help="folder for the tables and plots (default: <first campaign>/tables)"),
    policy: str = typer.Option(None, help="base_fallback | exclude | nan (default: the campaign's scoring.policy)"),
    weights: str = typer.Option(
        "auto", help="auto (from instruct and base baselines) | equal | ptb (the published weights) | FILE.json"
    ),
    baselines: list[str] = typer.Option(
        None, help="folder(s) of `ptbench baseline` records (default: results/baselines beside the campaign)"
    ),
    allow_mixed: bool = typer.Option(
        False, "--allow-mixed", help="merge results whose evaluation settings or test sets differ"
    ),
    plots: bool = typer.Option(True, "--plots/--no-plots", help="draw the plots (matplotlib: the slowest part)"),
    compare: list[str] = typer.Option(
        None, "--compare", help="A:B (agent labels; repeatable): paired difference A − B with 95% CI and p-value"
    ),
    ci: bool = typer.Option(False, "--ci", help="a 95% CI on every agent cell (Student t over seeds)"),
    seeds_needed: float = typer.Option(
        None, "--seeds-needed", metavar="WIDTH", help="how many seeds reach a 95% CI this wide (points)"
    ),
) -> None:
    """Aggregate results: Markdown on screen; CSV, LaTeX (booktabs), JSON, cost table and plots (PNG, PDF)."""
    from pathlib import Path

    from rich.console import Console
    from rich.markup import escape

    # not ptbench.commands: it imports the runner and the gateway (half a second) that collating never uses
    from ptbench.results.collate import write_tables

    md, files, problems = write_tables(
        targets,
        out,
        plots=plots,
        policy=policy,
        weights=weights,
        allow_mixed=allow_mixed,
        baselines=[Path(b) for b in baselines] if baselines else None,
        compare=compare or None,
        ci=ci,
        seeds_width=seeds_needed,
    )
    console, err_console = Console(), Console(stderr=True)
    for p in problems:
        err_console.print(f"[yellow]warning:[/] {escape(p)}", soft_wrap=True)  # labels may hold [brackets]
    console.print(md, markup=False, highlight=False, soft_wrap=True)
    console.print(f"tables: {', '.join(str(f) for f in files)}", markup=False, highlight=False, soft_wrap=True)


@app.command()
def report(
    targets: list[str] = typer.Argument(..., help="campaign files or results folders (several merge, as in collate)"),
    out: str = typer.Option(None, help="folder for the site (default: <first campaign>/report)"),
    policy: str = typer.Option(None, help="base_fallback | exclude | nan (default: the campaign's scoring.policy)"),
    weights: str = typer.Option("auto", help="auto | equal | ptb | FILE.json (as in collate)"),
    baselines: list[str] = typer.Option(None, help="folder(s) of `ptbench baseline` records"),
    allow_mixed: bool = typer.Option(
        False, "--allow-mixed", help="merge results whose evaluation settings or test sets differ"
    ),
    compare: list[str] = typer.Option(None, "--compare", help="A:B (repeatable): paired comparisons, as in collate"),
    ci: bool = typer.Option(False, "--ci", help="a 95% CI on every agent cell, as in collate"),
) -> None:
    """A static HTML site (opens from disk, offline): tables, plots, one page per trial with its trajectory."""
    from pathlib import Path

    from rich.markup import escape

    from ptbench import commands
    from ptbench.results.collate import collate_dirs, write_outputs
    from ptbench.results.report import build_report

    roots = [commands.resolve_campaign_dir(t)[0] for t in targets]
    result = collate_dirs(
        roots,
        policy=policy,
        weights=weights,
        allow_mixed=allow_mixed,
        baselines=[Path(b) for b in baselines] if baselines else None,
        compare=compare or None,
        ci=ci,
    )
    site = Path(out) if out else roots[0] / "report"
    write_outputs(result, site / "tables")
    index = build_report(result, site, site / "tables")
    for p in result.warnings:
        commands.err_console.print(f"[yellow]warning:[/] {escape(p)}", soft_wrap=True)
    commands.console.print(
        f"report: {index} ({len(result.collation.trials)} trial page(s))", markup=False, highlight=False
    )


@trial_app.command("run")
def trial_run(trial_dir: str = typer.Argument(..., help="a planned trial directory")) -> None:
    """Run (or resume) one trial: prepare, solve, collect, integrity, evaluate, record."""
    from ptbench.runner.pipeline import run_trial

    raise typer.Exit(run_trial(trial_dir))


@app.command("check")
def check_cmd(
    trial_dir: str = typer.Argument(..., help="a trial directory"),
    only: list[str] = typer.Option(None, "--only", help="run just this check (repeatable)"),
) -> None:
    """Re-run a trial's integrity checks; verdicts and evidence go to its checks/ folder."""
    from ptbench.integrity.recheck import recheck

    verdicts, reasons, summary = recheck(trial_dir, checks=only or None)
    for name, verdict in verdicts.items():
        print(f"{name:15} {verdict:9} {reasons.get(name, '')}")
    print(f"evidence: {summary.parent}/<check>.json")
    raise typer.Exit(1 if "flagged" in verdicts.values() else 0)


@app.command("eval")
def eval_cmd(
    task: str = typer.Argument(..., help="task name"),
    model: str = typer.Option(..., help="model folder (or hub id)"),
    out: str = typer.Option("eval", help="folder for metrics.json and samples.jsonl"),
    limit: int = typer.Option(None, help="evaluate only the first N examples"),
    engine: str = typer.Option("auto", help="auto | transformers | vllm"),
    batch_size: int = typer.Option(32),
    task_options: str = typer.Option("{}", help="task options as JSON"),
    base_model: str = typer.Option(
        None, help="base model id of the trial: picks the harness's chat template for its family"
    ),
    chat_template: str = typer.Option(
        "harness",
        help="harness (by --base-model) | model (the model's own, recorded) | qwen3 | gemma3 | smollm3 | llama3",
    ),
    agent_view: bool = typer.Option(
        False, "--agent-view", help="leave test references and grading details out of samples.jsonl"
    ),
    eval_cache: str = typer.Option(
        None, help="harness-only evaluation cache (judge verdicts); default $PTBENCH_EVAL_CACHE"
    ),
    verify_install: bool = typer.Option(
        False, "--verify-install", help="refuse to evaluate if ptbench or a scoring package differs from its RECORD"
    ),
) -> None:
    """Evaluate a model on a task with the harness's own evaluation code."""
    import json

    from ptbench.core.errors import UserError

    caches = None
    if eval_cache:  # before anything imports huggingface_hub, which reads its cache paths once
        from ptbench.runner.eval_stage import use_harness_caches

        caches = use_harness_caches(eval_cache)
    from ptbench.tasks.evaluate import evaluate

    try:
        options = json.loads(task_options)
    except json.JSONDecodeError as exc:
        raise UserError(f"--task-options: not valid JSON ({exc})") from None
    installation = None
    if verify_install:
        from ptbench.runner.installation import verify_installation

        installation = verify_installation()
    m = evaluate(
        task,
        model,
        out,
        task_options=options,
        engine=engine,
        limit=limit,
        batch_size=batch_size,
        base_model=base_model,
        chat_template=chat_template,
        agent_view=agent_view,
        installation=installation,
        caches=caches,
    )
    p = m["primary"]
    stderr = f" ± {p['stderr']:.4f}" if p["stderr"] is not None else ""
    print(f"{task}: {p['name']} = {p['value']:.4f}{stderr} (n={p['n']}, engine {m['settings']['engine']})")


@app.command("eval-references")
def eval_references_cmd(
    task: str = typer.Argument(..., help="task scored against reference answers (arena_hard_writing)"),
    model: str = typer.Option(..., help="the official instruct model's folder (or hub id), e.g. Qwen3-1.7B"),
    out: str = typer.Option(None, help="references root (default: $PTBENCH_EVAL_CACHE/references)"),
    name: str = typer.Option(
        None, help="whose answers these are (default: the task's reference_model, Qwen/Qwen3-1.7B)"
    ),
    engine: str = typer.Option("auto", help="auto | transformers | vllm (use the engine evaluation uses)"),
    batch_size: int = typer.Option(32),
    limit: int = typer.Option(None, help="answer only the first N questions"),
    task_options: str = typer.Option("{}", help="task options as JSON"),
    chat_template: str = typer.Option(
        "model", help="model (the instruct model's own, default) | harness | a family name"
    ),
    base_model: str = typer.Option(None, help="with --chat-template harness: the id that picks the family"),
    replace: bool = typer.Option(False, "--replace", help="make them again where they exist"),
) -> None:
    """Generate and cache the reference answers a task judges against (Arena-Hard writing)."""
    import json

    from ptbench.tasks.references import generate_references

    try:
        options = json.loads(task_options)
    except json.JSONDecodeError as exc:
        raise UserError(f"--task-options: not valid JSON ({exc})") from None
    path = generate_references(
        task,
        model,
        out,
        name=name,
        engine=engine,
        batch_size=batch_size,
        limit=limit,
        task_options=options,
        chat_template=chat_template,
        base_model=base_model,
        replace=replace,
    )
    print(f"{task}: reference answers in {path}")


@app.command()
def baseline(
    model: str = typer.Option(..., help="model folder (or hub id) to evaluate as-is"),
    tasks: str = typer.Option(
        "gsm8k,aime2025,gpqa,humaneval,bfcl,arena_hard_writing,healthbench_easy", help="comma-separated task names"
    ),
    kind: str = typer.Option("base", help="base (completion templates) | instruct (the model's chat template)"),
    fewshot: str = typer.Option("0", help="base only: comma-separated shot counts, e.g. 0,5"),
    out: str = typer.Option("results/baselines", help="folder for the result records (`ptbench collate` reads it)"),
    engine: str = typer.Option("auto", help="auto | transformers | vllm"),
    batch_size: int = typer.Option(32),
    limit: int = typer.Option(None, help="evaluate only the first N examples of each task"),
    task_options: str = typer.Option("{}", help='per-task options as JSON, e.g. {"gsm8k": {"data_path": "..."}}'),
    label: str = typer.Option(None, help="model label in tables (default: the folder name)"),
) -> None:
    """Evaluate a base or instruct model into result records, so tables can show baselines."""
    import json

    from ptbench.tasks.baseline import run_baseline

    try:
        options = json.loads(task_options)
    except json.JSONDecodeError as exc:
        raise UserError(f"--task-options: not valid JSON ({exc})") from None
    paths = run_baseline(
        model,
        [t.strip() for t in tasks.split(",") if t.strip()],
        kind=kind,
        fewshot=[int(k) for k in fewshot.split(",")],
        out=out,
        engine=engine,
        batch_size=batch_size,
        limit=limit,
        task_options=options,
        label=label,
    )
    print(f"{len(paths)} result record(s) in {out}; tables: ptbench collate {out}")


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


SUBAPPS = ("bootcamp", "provider", "doctor", "export", "cache")


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


def main(argv: list[str] | None = None) -> None:
    """Console entry point: user errors become one line on stderr and exit code 2."""
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
        rc = app(args=args, standalone_mode=False)  # click returns typer.Exit's code here
        if isinstance(rc, int) and rc:
            sys.exit(rc)
    except UserError as exc:
        if debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except SystemExit:
        raise
    except Exception as exc:  # click's own usage errors
        import click

        if isinstance(exc, click.exceptions.ClickException):
            exc.show()
            sys.exit(2)
        if isinstance(exc, click.exceptions.Abort):
            sys.exit(130)
        raise


if __name__ == "__main__":
    main()
