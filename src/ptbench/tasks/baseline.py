"""`ptbench baseline`: evaluate a model as-is into result records the collator reads, so tables
can show the base model (zero-shot, few-shot) and the official instruct model next to agents.

Base models are prompted with the tasks' explicit completion templates (prompt_format=base),
few-shot with the worked examples a task ships (tasks without any are skipped in few-shot mode);
instruct models through their own chat template. One record per (model, setting, task) in
`<out>/<setting>/<model>/<task>/result.json`, evaluation files beside it in `eval/`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def settings_for(kind: str, fewshot: list[int]) -> list[tuple[str, dict[str, Any]]]:
    """(agent label, task options) for each requested setting."""
    if kind == "instruct":
        return [("instruct", {"prompt_format": "chat"})]
    if kind != "base":
        from ptbench.core.errors import UserError

        raise UserError(f"--kind {kind!r}: use base or instruct")
    return [
        ("base (zero-shot)" if k == 0 else f"base ({k}-shot)", {"prompt_format": "base", "fewshot": k}) for k in fewshot
    ]


def run_baseline(
    model: str,
    tasks: list[str],
    *,
    kind: str = "base",
    fewshot: Sequence[int] = (0,),
    out: str | Path = "results/baselines",
    engine: str = "auto",
    batch_size: int = 32,
    limit: int | None = None,
    task_options: dict[str, dict[str, Any]] | None = None,
    label: str | None = None,
) -> list[Path]:
    """Evaluate and write one result.json per (setting, task); returns their paths."""
    from ptbench.core.errors import EvaluationFailed
    from ptbench.core.provenance import provenance
    from ptbench.inference import get_engine
    from ptbench.results.schema import (
        AgentInfo,
        BaseModelInfo,
        BudgetUsed,
        Failure,
        Metric,
        Provenance,
        ResultRecord,
        TaskInfo,
    )
    from ptbench.results.store import write_record
    from ptbench.tasks.base import task_class
    from ptbench.tasks.evaluate import evaluate

    model_label = label or Path(model.rstrip("/")).name
    eng = get_engine(engine, model, batch_size=batch_size)  # loaded once for every task and setting
    written = []
    for agent_label, base_options in settings_for(kind, list(fewshot)):
        slug = re.sub(r"[^a-z0-9]+", "-", agent_label.lower()).strip("-")
        for task in tasks:
            k = base_options.get("fewshot", 0)
            shipped = task_class(task).max_fewshot  # worked examples the task ships for base-model prompts
            if k and k > shipped:
                print(f"{task}: skipped for {agent_label} (the task ships {shipped} worked examples)")
                continue
            options = {**(task_options or {}).get(task, {}), **base_options}
            if not options.get("fewshot"):
                options.pop("fewshot", None)
            trial_dir = Path(out) / slug / model_label / task
            trial_dir.mkdir(parents=True, exist_ok=True)
            if (trial_dir / "result.json").exists():  # a recorded result is never overwritten
                print(
                    f"{agent_label} / {model_label} / {task}: kept the existing {trial_dir / 'result.json'} (move it "
                    "aside to redo)"
                )
                continue
            record = ResultRecord(
                campaign="baselines",
                trial_id=f"baseline-{slug}-{model_label}-{task}",
                agent=AgentInfo(name=f"baseline-{slug}", label=agent_label),
                base_model=BaseModelInfo(id=model, label=model_label),
                task=TaskInfo(name=task, label=task),
                seed=0,
                status="completed",
                budget=BudgetUsed(hours=0.0, gpus=0),
                provenance=Provenance(**provenance()),
                finished_at=time.time(),
            )
            try:
                m = evaluate(
                    task,
                    model,
                    trial_dir / "eval",
                    task_options=options,
                    engine=eng,
                    limit=limit,
                    batch_size=batch_size,
                )
            except EvaluationFailed as exc:
                record.status, record.failure = (
                    "eval_failed",
                    Failure(stage="evaluate", kind="eval_error", message=str(exc)[:500]),
                )
            else:
                record.primary_metric = Metric(**m["primary"])
                record.extra_metrics, record.evaluation = m["extra"], m["settings"]
                record.task.version = m["task"]["version"]
            write_record(trial_dir / "result.json", record)
            written.append(trial_dir / "result.json")
            value = f"{record.primary_metric.value:.4f}" if record.primary_metric else record.status
            print(f"{agent_label} / {model_label} / {task}: {value}")
    close = getattr(eng, "close", None)
    if close:
        close()
    return written
