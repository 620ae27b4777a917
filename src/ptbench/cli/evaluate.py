"""Evaluation commands: `eval`, `eval-references` and `baseline` (the harness's own evaluation code).

Registered on the root app by `ptbench.cli.main`.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import typer

from ptbench.core.errors import UserError


def _task_options(text: str) -> Any:
    """The --task-options JSON, or one line saying it is not JSON."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"--task-options: not valid JSON ({exc})") from None


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
    install_cache: str = typer.Option(
        None, help="(the runner's) --verify-install's hash cache, a file only the harness can write"
    ),
    memorization_context: str = typer.Option(
        None, help="(the runner's) a trial's check context as JSON: also score the memorization check's items"
    ),
) -> None:
    """Evaluate a model on a task with the harness's own evaluation code."""
    caches = None
    if eval_cache:  # before anything imports huggingface_hub, which reads its cache paths once
        from ptbench.runner.eval_stage import use_harness_caches

        caches = use_harness_caches(eval_cache)
    from ptbench.tasks.evaluate import evaluate

    _check_model_path(model)
    options = _task_options(task_options)
    installation = None
    if verify_install:
        from pathlib import Path

        from ptbench.runner.installation import verify_installation

        installation = verify_installation(cache_file=Path(install_cache) if install_cache else None)
    after = None
    if memorization_context:
        from pathlib import Path

        from ptbench.integrity.memorization.final_scores import score_in_evaluation

        context = json.loads(memorization_context)

        def after(engine: Any) -> None:
            print(score_in_evaluation(context, engine, Path(out)), file=sys.stderr)

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
        after=after,
    )
    p = m["primary"]
    stderr = f" ± {p['stderr']:.4f}" if p["stderr"] is not None else ""
    print(f"{task}: {p['name']} = {p['value']:.4f}{stderr} (n={p['n']}, engine {m['settings']['engine']})")


def _check_model_path(model: str) -> None:
    """A path (absolute, ./ or ../, or ~) must be a folder here: it is never read as a hub id."""
    from pathlib import Path

    from ptbench.core.errors import UserError

    if model.startswith(("/", "./", "../", "~")) or Path(model).exists():
        folder = Path(model).expanduser()
        if not folder.is_dir():
            raise UserError(
                f"--model {model}: no such folder (give a model folder, or a hub id such as Qwen/Qwen3-1.7B)"
            )


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
    from ptbench.tasks.references import generate_references

    _check_model_path(model)
    options = _task_options(task_options)
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


def baseline(
    model: str = typer.Option(..., help="model folder (or hub id) to evaluate as-is"),
    tasks: str = typer.Option(
        None, help="comma-separated task names (default: the benchmarks that mark themselves default_baseline)"
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
    from ptbench.tasks.base import default_baseline_tasks
    from ptbench.tasks.baseline import run_baseline

    _check_model_path(model)
    options = _task_options(task_options)
    paths = run_baseline(
        model,
        [t.strip() for t in tasks.split(",") if t.strip()] if tasks else default_baseline_tasks(),
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
