"""`ptbench bootcamp ...`: generate data, roll out episodes on a backend, merge traces, serve tools."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import typer
from pydantic import BaseModel, ConfigDict

from ptbench.core.errors import UserError
from ptbench.spec import Backend

app = typer.Typer(no_args_is_help=True, add_completion=False, help=__doc__)


def _default_out(config_name: str, what: str) -> Path:
    return Path("results") / "bootcamp" / config_name / what


@app.command()
def generate(
    config: Path = typer.Argument(..., help="bootcamp YAML, or a suite YAML (each member into OUT/<name>)"),
    out: Path | None = typer.Option(None, help="output folder (default results/bootcamp/<name>/data)"),
    shard: str | None = typer.Option(
        None, help="i/N: only compute this shard's cases; run once more without --shard to assemble"
    ),
    parquet: bool = typer.Option(True, help="also write <split>.parquet"),
    force: bool = typer.Option(False, help="overwrite data made from a different config"),
    workers: int = typer.Option(0, help="worker processes (0: one per CPU this process may use)"),
) -> None:
    """Write <split>.jsonl/.parquet (verl RLHF layout), sft/<split>.jsonl and manifest.json.
    Deterministic and resumable."""
    from rich.console import Console
    from rich.table import Table

    from ptbench.bootcamp.config import load_bootcamp
    from ptbench.bootcamp.data.datagen import Shard
    from ptbench.bootcamp.data.datagen import generate as _generate
    from ptbench.bootcamp.data.suite import is_suite, load_configs, suite_name

    if is_suite(config):
        base = out or _default_out(suite_name(config), "data")
        targets = [(cfg, base / cfg.name) for cfg in load_configs(config)]
    else:
        cfg = load_bootcamp(config)
        targets = [(cfg, out or _default_out(cfg.name, "data"))]
    console, err = Console(), Console(stderr=True)
    for cfg, target in targets:

        def progress(msg: str, name: str = cfg.name) -> None:
            err.print(f"[dim]{name}: {msg}[/]")

        result = _generate(
            cfg,
            target,
            shard=Shard.parse(shard) if shard else None,
            parquet=parquet,
            force=force,
            workers=workers or None,
            progress=progress,
        )
        if shard:
            console.print(f"{result['shard']}: {result['new_candidates']} new candidate cases under {target}/.cache")
            continue
        table = Table(title=f"{cfg.name} -> {target}")
        for col in ("split", "rows", "levels", "sha256"):
            table.add_column(col)
        for split, info in result["splits"].items():
            table.add_row(
                split,
                str(info["n"]),
                ", ".join(f"{k}: {v}" for k, v in info["levels"].items()),
                info["jsonl_sha256"][:16],
            )
        console.print(table)


@app.command()
def rollout(
    config: Path = typer.Argument(
        ..., help="bootcamp YAML, or a suite YAML (each member into OUT/<name>, then one merge)"
    ),
    endpoint: str = typer.Option(..., help="OpenAI-compatible base URL, e.g. http://host:8000/v1"),
    model: str = typer.Option(..., help="model name sent in each request"),
    out: Path | None = typer.Option(None, help="rollout folder (default results/bootcamp/<name>/rollout-<split>)"),
    split: str = typer.Option("test", help="which split to play"),
    data: Path | None = typer.Option(None, help="generated data folder (default: generate into OUT/data)"),
    shards: int = typer.Option(1, min=1, help="number of shards"),
    backend: str | None = typer.Option(None, help="local | slurm | htcondor (default: --backend-config's, else local)"),
    backend_config: Path | None = typer.Option(
        None, help="YAML with `backend: {name, options}` (a campaign file works): the same options trials take"
    ),
    render: bool = typer.Option(
        False, help="write the submit file (slurm/htcondor) under OUT/submit or OUT/condor and stop"
    ),
    concurrency: int = typer.Option(64, min=1, help="episodes in flight per shard"),
    timeout: float = typer.Option(120.0, help="per-request timeout in seconds"),
    max_retries: int = typer.Option(6, min=0, help="retries per request (429/5xx/timeouts/connection errors)"),
    limit: int | None = typer.Option(None, min=1, help="play only the first N rows of the split"),
    tool_server: str | None = typer.Option(
        None, help="tool server URL (default: OUT/toolserver.json) for tools with remote: true"
    ),
    tool_replicas: int | None = typer.Option(
        None,
        min=1,
        help=(
            "run tools with remote: true on N tool-server replicas (one job array / cluster on the backend), "
            "stopped when the rollout ends"
        ),
    ),
    api_key_env: str | None = typer.Option(
        None, help="environment variable that holds the API key (the key is never written)"
    ),
    wait: bool = typer.Option(True, help="wait for the shards and merge (slurm); htcondor never waits"),
    slurm_partition: str | None = typer.Option(None, help="Slurm partition (shortcut for backend.options.partition)"),
    slurm_time: int = typer.Option(60, help="Slurm time limit per shard, minutes"),
    force: bool = typer.Option(False, help="reuse OUT even if it holds a rollout with other settings"),
    extra_body: str | None = typer.Option(
        None, help='JSON object of extra request fields, e.g. \'{"chat_template_kwargs": {"enable_thinking": false}}\''
    ),
) -> None:
    """Play a split's episodes against a model endpoint, sharded; resumes where a previous run stopped."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ptbench.backends import get_backend
    from ptbench.bootcamp.config import load_bootcamp
    from ptbench.bootcamp.data.datagen import generate as _generate
    from ptbench.bootcamp.data.datagen import load_rows
    from ptbench.bootcamp.data.suite import is_suite, merge_suite, suite_name, write_members
    from ptbench.bootcamp.rollout.merge import merge as _merge
    from ptbench.bootcamp.rollout.merge import summary_table
    from ptbench.bootcamp.rollout.runner import RolloutSettings, write_settings
    from ptbench.rollout_launcher.launch import check_replicas, describe, failed_shards, launch

    if is_suite(config):
        if data is not None:
            raise UserError("--data: a suite generates each member's data into OUT/<name>/data; leave --data out")
        base = (out or _default_out(suite_name(config), f"rollout-{split}")).resolve()
        for name, member in write_members(config, base):
            rollout(
                member,
                endpoint,
                model,
                out=base / name,
                split=split,
                data=None,
                shards=shards,
                backend=backend,
                backend_config=backend_config,
                render=render,
                concurrency=concurrency,
                timeout=timeout,
                max_retries=max_retries,
                limit=limit,
                tool_server=tool_server,
                tool_replicas=tool_replicas,
                api_key_env=api_key_env,
                wait=wait,
                slurm_partition=slurm_partition,
                slurm_time=slurm_time,
                force=force,
                extra_body=extra_body,
            )
        if render or not wait or not get_backend(_backend_choice(backend, backend_config)[0], {}).waits:
            return
        summary = merge_suite(base)
        Console().print(summary_table(summary))
        Console().print(
            f"suite traces: {base / 'merged' / 'traces.jsonl'}  summary: {base / 'merged' / 'summary.json'}"
        )
        return
    backend, options = _backend_choice(backend, backend_config)
    if slurm_partition:
        options = {**options, "partition": slurm_partition}
    chosen = get_backend(backend, options)  # bad options: one line before anything is written
    cfg = load_bootcamp(config)
    body = _parse_extra_body(extra_body)
    if tool_replicas:
        check_replicas(any(t.remote for t in cfg.tools), cfg.name, tool_server, wait, chosen.waits)
    out = (out or _default_out(cfg.name, f"rollout-{split}")).resolve()
    if data is None:
        data = out / "data"
        _generate(cfg, data)
    data = data.resolve()
    n_rows = len(load_rows(data, split))
    settings = RolloutSettings(
        config=cfg,
        config_hash=cfg.config_hash(),
        data_dir=str(data),
        split=split,
        endpoint=endpoint,
        model=model,
        api_key_env=api_key_env,
        concurrency=concurrency,
        request_timeout_s=timeout,
        max_retries=max_retries,
        limit=limit,
        tool_server=tool_server,
        tool_replicas=tool_replicas,
        extra_body=body,
    )
    write_settings(out, settings, force=force)
    console = Console()
    total = min(n_rows, limit) if limit else n_rows
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=render,
    ) as bar:
        task = bar.add_task(f"{cfg.name}/{split}", total=total)
        launched = launch(
            out,
            chosen,
            shards,
            tool_replicas=tool_replicas,
            minutes=slurm_time,
            wait=wait,
            render=render,
            progress=lambda n: bar.update(task, completed=min(n, total)),
        )
    for path in launched.rendered:
        console.print(str(path))
    if launched.codes is None:
        for line in describe(launched, out, shards, tool_replicas):
            console.print(line)
        return
    summary = _merge(out)
    console.print(summary_table(summary))
    console.print(f"traces: {out / 'merged' / 'traces.jsonl'}  summary: {out / 'merged' / 'summary.json'}")
    failed_shards(launched.codes, out)


def _parse_extra_body(text: str | None) -> dict:
    if not text:
        return {}
    try:
        body = json.loads(text)
    except ValueError as exc:
        raise UserError(f"--extra-body: not JSON ({exc}); pass an object, e.g. '{{\"top_k\": 20}}'") from None
    if not isinstance(body, dict):
        raise UserError("--extra-body: pass a JSON object, e.g. '{\"top_k\": 20}'")
    clash = sorted(set(body) & {"model", "messages", "tools", "stream"})
    if clash:
        raise UserError(f"--extra-body must not set {', '.join(clash)} (the harness sets them)")
    return body


class _BackendFile(BaseModel):
    """A file that names a backend: a campaign file, or one with only `backend: {name, options}`."""

    model_config = ConfigDict(extra="ignore")
    backend: Backend


def _backend_choice(name: str | None, config: Path | None) -> tuple[str, dict]:
    """The backend and its options, from --backend-config (validated like a campaign's) and --backend."""
    from ptbench.backends.registry import check_backend_name
    from ptbench.spec import load_model_file

    chosen, options = "local", {}
    if config is not None:
        found, src = load_model_file(config, _BackendFile)
        chosen, options = found.backend.name, dict(found.backend.options)
        from ptbench.validate import check_backend_options

        check_backend_options(found.backend, src)  # file:line and the nearest option, as `validate` says it
    name = name or chosen
    check_backend_name(name, f"--backend {name}")
    return name, options if name == chosen else {}


@app.command("rollout-shard")
def rollout_shard(
    out: Path = typer.Argument(..., help="rollout folder written by `ptbench bootcamp rollout`"),
    shard: str = typer.Option("0/1", help="i/N"),
) -> None:
    """Run one shard of a rollout (what a scheduler job executes)."""
    from ptbench.bootcamp.data.datagen import Shard
    from ptbench.bootcamp.rollout.runner import run_shard

    counts = run_shard(out, Shard.parse(shard))
    print(json.dumps(counts))


@app.command()
def merge(
    out: Path = typer.Argument(..., help="rollout folder (or a suite rollout folder)"),
    as_json: bool = typer.Option(False, "--json", help="print the summary as JSON instead of a table"),
) -> None:
    """Merge shard traces into merged/traces.jsonl (one record per episode) and merged/summary.json."""
    from rich.console import Console

    from ptbench.bootcamp.data.suite import is_suite_rollout, merge_suite
    from ptbench.bootcamp.rollout.merge import merge as _merge
    from ptbench.bootcamp.rollout.merge import summary_table

    summary = merge_suite(out) if is_suite_rollout(out) else _merge(out)
    if as_json:
        print(json.dumps(summary, indent=2))
    else:
        Console().print(summary_table(summary))
        if summary["missing"]:
            Console().print(
                f"[yellow]{summary['missing']} episodes have no record yet; rerun the rollout to finish them[/]"
            )


@app.command()
def sft(
    config: Path = typer.Argument(..., help="bootcamp YAML"),
    out: Path = typer.Option(..., help="JSONL to write, e.g. workspace/data/train.jsonl"),
    split: str = typer.Option("train"),
    fmt: str = typer.Option(
        "chat",
        "--format",
        help=(
            "chat: TRL conversational (prompt/completion messages, tools); "
            "text: plain prompt/completion strings (base models, the reference agent)"
        ),
    ),
    from_traces: Path | None = typer.Option(None, help="rollout folder: export its episodes as TRL `messages` instead"),
    only_correct: bool = typer.Option(True, help="with --from-traces: keep only episodes judged correct"),
    min_score: float | None = typer.Option(None, help="with --from-traces: keep only episodes scoring at least this"),
    expand_turns: bool = typer.Option(
        False, help="with --from-traces: one example per assistant turn (prompt = history, completion = that turn)"
    ),
) -> None:
    """Write SFT data: the generator's reference answers, or a rollout's traces (TRL's conversational format)."""
    from ptbench.bootcamp.export.sft import sft_examples, sft_from_traces
    from ptbench.core import fastjson
    from ptbench.core.files import atomic_write_bytes

    note = ""
    if from_traces:
        rows, counts = sft_from_traces(
            from_traces, only_correct=only_correct, min_score=min_score, expand_turns=expand_turns
        )
        note = (
            f" from {counts['kept']} of {counts['episodes']} episodes ({counts['skipped_filter']} filtered out, "
            f"{counts['skipped_bad_calls']} with malformed tool calls)"
        )
    else:
        rows = sft_examples(config, split, fmt)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(out, b"".join(fastjson.dumps_line(r) for r in rows))
    print(f"{len(rows)} rows -> {out}{note}")


@app.command("export-verl")
def export_verl(
    config: Path = typer.Argument(..., help="bootcamp YAML (or a suite YAML listing several)"),
    out: Path = typer.Argument(..., help="folder to write the verl dataset and configs to"),
    force: bool = typer.Option(False, help="overwrite data made from a different config"),
) -> None:
    """Write the dataset, tool config, agent-loop config and a trainer snippet for verl (0.9.1)."""
    from ptbench.bootcamp.data.suite import load_configs
    from ptbench.bootcamp.export.verl_export import export_verl as _export

    manifest = _export(load_configs(config), out, force=force)
    for split, info in manifest["splits"].items():
        print(
            f"{split}: {info['n']} rows "
            f"({', '.join(f'{k}: {v}' for k, v in info['by_data_source'].items()) or 'empty'})"
        )
    print(
        f"tools: {out / 'tools.yaml'}  agent loop: {out / 'agent_loops.yaml'}  trainer snippet (merge into your verl "
        f"config): {out / 'trainer.yaml'}"
    )


@app.command("serve-tools")
def serve_tools(
    dir: Path | None = typer.Option(
        None, "--dir", help="campaign/rollout folder to announce the server in (toolserver.json)"
    ),
    host: str = typer.Option("127.0.0.1", help="interface to bind (0.0.0.0 for a cluster)"),
    port: int = typer.Option(0, help="port (0: any free port)"),
    advertise: str | None = typer.Option(None, help="host name shards should use (default: this host)"),
    request_timeout: float = typer.Option(60.0, help="server-side limit per tool call, seconds"),
    idle_ttl: float = typer.Option(600.0, help="release tool instances idle this long, seconds"),
    imports: list[str] = typer.Option([], "--import", help="module registering extra tools (repeatable)"),
    replica: int | None = typer.Option(
        None,
        min=0,
        help=(
            "serve as replica I of the rollout in --dir "
            "(announced in tool-servers/replica-I.json; needs the rollout's token)"
        ),
    ),
    idle_exit: float | None = typer.Option(None, help="replica: exit after this many seconds without a request"),
    shards: int | None = typer.Option(
        None, min=1, help="replica: also exit once all N shards of the rollout wrote their final file (HTCondor)"
    ),
) -> None:
    """Serve registered tools over HTTP for many shards (aiohttp, as the gateway), with timeouts and /health."""
    from ptbench.core.stopsignals import StopSignals

    # First, before the slow imports (aiohttp, the tools' modules): a SIGINT/SIGTERM from here on is
    # kept, not raised as a KeyboardInterrupt inside an import, where importlib's module-lock callback
    # swallowed it and the server ran on (CI saw it).
    with StopSignals() as stop:
        from ptbench.backends.registry import load_job_readers
        from ptbench.bootcamp.serving.toolserver import serve_until_stopped

        load_job_readers()  # a replica announces the scheduler job it runs in
        serve_until_stopped(
            stop,
            dir,
            host=host,
            port=port,
            advertise=advertise,
            request_timeout_s=request_timeout,
            idle_ttl_s=idle_ttl,
            imports=imports,
            replica=replica,
            idle_exit_s=idle_exit,
            shards=shards,
        )


@app.command("list")
def list_components(
    campaigns: Path | None = typer.Option(None, help="folder of example bootcamp YAMLs (default campaigns/bootcamp)"),
    as_json: bool = typer.Option(False, "--json", help="print the catalogue as JSON"),
    verified: bool = typer.Option(
        False,
        "--verified",
        help="only environments whose last `bootcamp verify` passed (failed or never run: left out)",
    ),
    totals: bool = typer.Option(False, "--totals", help="by source: installed, verified, distinct task families"),
) -> None:
    """The environment catalogue (domain, tools, levels, extra, last verification), then the registered parts;
    with --totals, the counts by source instead."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from ptbench.bootcamp.api import GENERATORS, INTERACTIONS, REWARDS, TOOLS
    from ptbench.bootcamp.catalogue import rows
    from ptbench.bootcamp.verify import load_store

    with contextlib.redirect_stdout(sys.stderr):  # libraries that print while loading never corrupt the JSON
        entries = rows(campaigns)
    store = load_store()
    for e in entries:
        last = store.get(e["name"])
        e["verified"] = last["status"] if last else "never"
    if totals:  # over every environment (--verified has no effect: verified is a column)
        from ptbench.bootcamp.families import print_totals

        return print_totals(entries, as_json=as_json)
    if verified:
        entries = [e for e in entries if e["verified"] == "verified"]
    if as_json:  # with each environment's last verification in full
        print(json.dumps([{**e, "verification": store.get(e["name"])} for e in entries], indent=2))
        return
    cols = ("name", "domain", "tools", "levels", "extra", "installed", "verified")
    table = Table(title="bootcamp environments")
    for col in cols:
        table.add_column(col)
    for e in entries:
        table.add_row(*(escape(e[c]) for c in cols))
    Console(width=200).print(table)
    for reg in (GENERATORS, TOOLS, INTERACTIONS, REWARDS):
        print(f"{reg.kind}s: {', '.join(reg.names())}")


@app.command()
def verify(
    names: list[str] = typer.Argument(None, help="environments (default: every installed one `bootcamp list` shows)"),
    cases: int = typer.Option(100, "--cases", min=1, help="seeded cases per environment"),
    json_path: Path | None = typer.Option(None, "--json", help="also write the results as JSON here"),
    fresh: bool = typer.Option(True, help="check determinism against a fresh interpreter's generation"),
) -> None:
    """Per environment: same seed, same bytes; its oracle scores 1 on every case; wrong, empty and
    hostile answers score 0; rewards in [0, 1]. Prints the table, stores the results for `bootcamp list`;
    exit 1 if any environment is not verified."""
    from ptbench.bootcamp.verify import run

    if not run(names or [], cases, json_path, fresh=fresh):
        raise typer.Exit(1)
