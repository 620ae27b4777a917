"""A small synthetic campaign of result records whose aggregates the tests compute by hand.

Tasks gsm8k and aime2025; base models A, B (and C, which has no baseline); agents x (seeds 0, 1)
and y (seed 0); baselines: base zero-shot and 5-shot for A and B, instruct for two instruct models.
"""

from __future__ import annotations

import json
from pathlib import Path

CLEAN = {"contamination": "clean", "model_identity": "clean"}


def record(
    agent: str,
    base: str,
    task: str,
    seed: int,
    value: float | None,
    status: str = "completed",
    *,
    integrity: dict | None = None,
    campaign: str = "c1",
    agent_name: str | None = None,
    failure: str | None = None,
    evaluation: dict | None = None,
    usage: dict | None = None,
    hours: float = 0.5,
) -> dict:
    failure = failure or {
        "no_model": "no_final_model",
        "agent_failed": "agent_exit",
        "cancelled": "cancelled",
        "eval_failed": "eval_error",
        "setup_failed": "no_gpu",
    }.get(status)
    return {
        "campaign": campaign,
        "trial_id": f"{agent}__{base}__{task}__s{seed}",
        "agent": {"name": agent_name or agent, "label": agent},
        "base_model": {"id": f"org/{base}", "label": base},
        "task": {"name": task, "label": task},
        "seed": seed,
        "status": status,
        "failure": {"stage": "solve", "kind": failure} if failure else None,
        "budget": {"hours": 1, "gpus": 1, "solve_seconds_used": hours * 3600, "solve_runs": 1},
        "primary_metric": None if value is None else {"name": "accuracy", "value": value, "stderr": 0.01, "n": 100},
        "integrity": CLEAN if integrity is None else integrity,
        "evaluation": {"limit": None, "generation": {"max_new_tokens": 100}}
        if evaluation is None and value is not None
        else (evaluation or {}),
        "usage": usage
        or {
            "input_tokens": 1000,
            "output_tokens": 100,
            "cache_read_tokens": 10,
            "cost_usd": 0.5,
            "tool_calls": 3,
            "runs": 2,
        },
        "provenance": {"ptbench_version": "0", "host": "h", "scheduler": "local"},
        "finished_at": 0,
    }


def baseline(setting_slug: str, label: str, model: str, task: str, value: float) -> dict:
    r = record(
        label,
        model,
        task,
        0,
        value,
        agent_name=f"baseline-{setting_slug}",
        campaign="baselines",
        integrity={},
        evaluation={"limit": None, "prompt_format": "base"},
    )
    r["trial_id"] = f"baseline-{setting_slug}-{model}-{task}"
    r["budget"] = {"hours": 0, "gpus": 0}
    r["usage"] = {}
    return r


TRIALS = [
    # agent x, seed 0
    record("x", "A", "gsm8k", 0, 0.50),
    record("x", "B", "gsm8k", 0, None, "no_model"),
    record("x", "A", "aime2025", 0, 0.20),
    record("x", "B", "aime2025", 0, 0.30, integrity={"contamination": "flagged", "model_identity": "clean"}),
    # agent x, seed 1
    record("x", "A", "gsm8k", 1, 0.60),
    record("x", "B", "gsm8k", 1, 0.70, integrity={}),  # no checks ran: unchecked
    record("x", "A", "aime2025", 1, None, "agent_failed"),
    record("x", "B", "aime2025", 1, 0.40),
    # agent y, seed 0: base C has no baseline
    record("y", "A", "gsm8k", 0, 0.10),
    record("y", "C", "gsm8k", 0, None, "cancelled"),
    record("y", "A", "aime2025", 0, 0.00),
    record("y", "C", "aime2025", 0, 0.05),
]
BASELINES = [
    baseline("base-zero-shot", "base (zero-shot)", "A", "gsm8k", 0.20),
    baseline("base-zero-shot", "base (zero-shot)", "A", "aime2025", 0.00),
    baseline("base-zero-shot", "base (zero-shot)", "B", "gsm8k", 0.30),
    baseline("base-zero-shot", "base (zero-shot)", "B", "aime2025", 0.10),
    baseline("base-5-shot", "base (5-shot)", "A", "gsm8k", 0.25),
    baseline("instruct", "instruct", "IA", "gsm8k", 0.80),
    baseline("instruct", "instruct", "IA", "aime2025", 0.30),
    baseline("instruct", "instruct", "IB", "gsm8k", 0.90),
    baseline("instruct", "instruct", "IB", "aime2025", 0.40),
]


def write(
    results: Path, trials=TRIALS, baselines=BASELINES, *, policy: str | None = None, campaign: str = "c1"
) -> Path:
    """results/<campaign>/<trial>/result.json + campaign.json; results/baselines/... like `ptbench baseline`."""
    cdir = results / campaign
    cdir.mkdir(parents=True, exist_ok=True)
    for r in trials:
        d = cdir / r["trial_id"]
        d.mkdir(parents=True, exist_ok=True)
        (d / "result.json").write_text(json.dumps(r))
    spec = {"name": campaign, "scoring": {"policy": policy}} if policy else {"name": campaign}
    (cdir / "campaign.json").write_text(json.dumps({"name": campaign, "spec": spec}))
    for r in baselines:
        slug = r["agent"]["name"].removeprefix("baseline-")
        d = results / "baselines" / slug / r["base_model"]["label"] / r["task"]["name"]
        d.mkdir(parents=True, exist_ok=True)
        (d / "result.json").write_text(json.dumps(r))
    return cdir
