"""`ptbench export harbor CAMPAIGN OUT`: one Harbor task directory per (base model, task).

    OUT/<base>__<task>/
      task.toml          Harbor's task config (schema 1.4): budget as the agent timeout, GPUs,
                         a separate verifier environment, the artifacts it receives
      instruction.md     the prompt a ptbench agent gets (the same template), with /app as workspace
      environment/       Dockerfile (the agent image's twin) + ptbench source + workspace/ (timer.sh,
                         evaluate.sh, data/train.jsonl)
      tests/             Dockerfile (the evaluation image's twin), ptbench source, test.sh, verify.json

Timer semantics: Harbor's `[agent].timeout_sec` (= budget.hours) is the hard limit, counted by
Harbor from the agent's start. `timer.sh` reads /app/.deadline, which the environment healthcheck
writes once right after the container starts (before Harbor installs the agent), so timer.sh shows
at most the time Harbor allows, never more. Evaluation runs in the verifier within
`[verifier].timeout_sec` (= budget.eval_minutes) and does not count against the budget.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import jinja2

from ptbench.agents.spec import load_agent
from ptbench.core.errors import UserError
from ptbench.core.files import atomic_write_json, atomic_write_text
from ptbench.export import toml_out
from ptbench.plan import expand
from ptbench.runner.workspace import EVALUATE_SH, TIMER_SH, render_prompt
from ptbench.spec import load_campaign
from ptbench.tasks import get_task

TORCH = "2.13.0"
PYTHON_PACKAGES = '"transformers>=5.16.1,<5.20" "trl>=0.20" "peft>=0.13" "vllm>=0.11" "datasets>=3" "accelerate>=1.0"'
CLI_AGENTS = ("claude-code", "codex", "gemini-cli", "opencode")
_SOURCE_ROOT = Path(__file__).resolve().parents[3]


def cli_packages() -> list[str]:
    """npm package@version of the four agent CLIs, from agents/*/agent.yaml (the one source of truth)."""
    return [load_agent(name).package for name in CLI_AGENTS]


def _templates() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader("ptbench.export", "templates"), undefined=jinja2.StrictUndefined,
                              keep_trailing_newline=True)


def _copy_source(dest: Path) -> None:
    """ptbench's own source (for the images to install): the package, pyproject.toml, README.md."""
    if not (_SOURCE_ROOT / "pyproject.toml").is_file():
        raise UserError("ptbench export harbor needs ptbench's source checkout (pyproject.toml beside src/); run it from a clone")
    (dest / "src").mkdir(parents=True)
    shutil.copytree(_SOURCE_ROOT / "src" / "ptbench", dest / "src" / "ptbench", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(_SOURCE_ROOT / name, dest / name)


def task_config(spec, name: str) -> dict:
    b = spec.budget
    env: dict = {"build_timeout_sec": 3600.0, "cpus": 16, "memory_mb": 128 * 1024, "storage_mb": 400 * 1024, "gpus": b.gpus,
                 "workdir": "/app",
                 # the clock of timer.sh starts once, when the container is up (see the module docstring)
                 "healthcheck": {"command": f"test -s /app/.deadline || echo $(( $(date +%s) + {int(b.seconds)} )) > /app/.deadline",
                                 "interval_sec": 1.0, "retries": 3}}
    if b.gpu_type:
        env["gpu_types"] = [b.gpu_type]
    verifier_env = {k: v for k, v in env.items() if k not in ("healthcheck", "workdir")}
    verifier_env["build_timeout_sec"] = 3600.0
    return {
        "schema_version": "1.4",
        "artifacts": [{"source": "/app/final_model"},
                      {"source": "/app", "destination": "workspace", "exclude": ["final_model", "*.safetensors", "*.bin", "*.pt", "*.gguf"]}],
        "task": {"name": f"ptbench/{name}", "description": f"Post-train {spec.base_model.id} for {spec.task.display} in {b.hours:g} h "
                 f"on {b.gpus} x {b.gpu_type or 'GPU'} (ptbench campaign {spec.campaign})", "keywords": ["post-training", "ptbench", spec.task.name]},
        "metadata": {"ptbench_campaign": spec.campaign, "base_model": spec.base_model.id, "base_model_revision": spec.base_model.revision or "",
                     "task": spec.task.name, "task_options": json.dumps(spec.task.options), "budget_hours": b.hours,
                     "timer": "timer.sh counts from container start; [agent].timeout_sec is the hard limit"},
        "agent": {"timeout_sec": float(b.seconds)},
        "environment": env,
        "verifier": {"timeout_sec": float(max(b.eval_minutes, 1) * 60), "environment_mode": "separate", "environment": verifier_env},
    }


def export_harbor(campaign_file: str | Path, out: str | Path) -> list[Path]:
    campaign = load_campaign(campaign_file)
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise UserError(f"{out}: not empty; export into a new folder (tasks are never overwritten)")
    seen: dict[tuple[str, str], object] = {}
    for spec in expand(campaign):
        seen.setdefault((spec.base_model.display, spec.task.display), spec)
    env = _templates()
    written = []
    for (base, task_label), spec in seen.items():
        name = f"{base}__{task_label}".replace("/", "-")
        tdir = out / name
        spec = spec.model_copy(update={"base_model": spec.base_model.model_copy(update={"path": None})})  # the cloud has the hub, not our paths
        task = get_task(spec.task.name, **spec.task.options)
        prompt = render_prompt(SimpleNamespace(spec=spec, workspace=Path("/app")), task_context=getattr(task, "agent_context", ""))
        atomic_write_text_mk(tdir / "instruction.md", prompt)
        atomic_write_text_mk(tdir / "task.toml", toml_out.dumps(task_config(spec, name)))
        ws = tdir / "environment" / "workspace"
        options = json.dumps(spec.task.options)
        atomic_write_text_mk(ws / "timer.sh", TIMER_SH, mode=0o755)
        atomic_write_text_mk(ws / "evaluate.sh", EVALUATE_SH.replace("@PYTHON@", "python").replace("@TASK@", spec.task.name)
                             .replace("@OPTIONS@", "'" + options.replace("'", "'\\''") + "'"), mode=0o755)
        train = task.train_examples(spec.seed)
        if train:
            atomic_write_text_mk(ws / "data" / "train.jsonl", "".join(json.dumps(r) + "\n" for r in train))
        atomic_write_text_mk(tdir / "environment" / "Dockerfile", env.get_template("agent.Dockerfile.j2").render(
            torch=TORCH, python_packages=PYTHON_PACKAGES, clis=" ".join(cli_packages())))
        _copy_source(tdir / "environment" / "ptbench")
        atomic_write_text_mk(tdir / "tests" / "Dockerfile", env.get_template("eval.Dockerfile.j2").render(torch=TORCH))
        _copy_source(tdir / "tests" / "ptbench")
        atomic_write_text_mk(tdir / "tests" / "test.sh", TEST_SH, mode=0o755)
        atomic_write_json(tdir / "tests" / "verify.json", {
            "task": spec.task.name, "options": spec.task.options, "engine": spec.evaluation.engine, "limit": spec.evaluation.limit,
            "batch_size": spec.evaluation.batch_size, "base_model": spec.base_model.id, "eval_seconds": spec.budget.eval_minutes * 60})
        written.append(tdir)
    return written


def atomic_write_text_mk(path: Path, text: str, mode: int | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text, mode=mode)


# The verifier: ptbench's evaluation (its own installed copy, not the agent's) and the checks on
# what the agent left, then Harbor's reward file. It never fails open: any error is reward 0.
TEST_SH = """#!/usr/bin/env bash
# Harbor verifier for a ptbench task: evaluates /app/final_model with the evaluation image's ptbench
# and writes /logs/verifier/reward.json (see ptbench.export.harbor_verify).
set -uo pipefail
mkdir -p /logs/verifier
python -m ptbench.export.harbor_verify /tests/verify.json /app/final_model /logs/verifier || true
test -s /logs/verifier/reward.json || echo '{"reward": 0.0, "verifier_error": 1}' > /logs/verifier/reward.json
"""
