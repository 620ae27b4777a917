"""`ptbench export harbor CAMPAIGN OUT`: one Harbor task directory per (base model, task).

    OUT/<base>__<task>/
      task.toml          Harbor's task config (schema 1.4): budget as the agent timeout, GPUs,
                         a separate verifier environment, the artifacts it receives
      instruction.md     the prompt a ptbench agent gets (the same template), with /app as workspace
      environment/       Dockerfile (the agent image's twin) + ptbench source + workspace/ (timer.sh,
                         evaluate.sh, data/train.jsonl)
      tests/             Dockerfile (the evaluation image's twin), ptbench source, test.sh, and the
                         verifier's only configuration: trial.json (the trial spec: base model, task,
                         integrity checks and policy) and verify.json (scoring policy, the test set's
                         expected hash, time limits); see harbor_verify

Timer semantics: Harbor's `[agent].timeout_sec` (= budget.hours) is the hard limit, counted by
Harbor from the agent's start. `timer.sh` reads /app/.deadline, which the environment healthcheck
writes once right after the container starts (before Harbor installs the agent), so timer.sh shows
at most the time Harbor allows, never more. Evaluation runs in the verifier within
`[verifier].timeout_sec` (two evaluations — the model's and, for a base fallback, the base's — plus
every check's time limit and 30 minutes for reference downloads) and does not count against the budget.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jinja2

from ptbench.agents.spec import load_agent
from ptbench.core.errors import UserError
from ptbench.core.files import atomic_write_json, atomic_write_text
from ptbench.export import toml_out
from ptbench.export.harbor_baseline import base_score, baseline_index
from ptbench.integrity.checks import CHECKS
from ptbench.plan import expand
from ptbench.runner.workspace import EVALUATE_SH, TIMER_SH, render_prompt
from ptbench.spec import load_campaign
from ptbench.spec.campaign import AgentRef
from ptbench.tasks import get_task
from ptbench.tasks.identity import scored_set_identity
from ptbench.trial import TrialSpec

TORCH = "2.13.0"
PYTHON_PACKAGES = '"transformers>=5.16.1,<5.20" "trl>=0.20" "peft>=0.13" "vllm>=0.11" "datasets>=3" "accelerate>=1.0"'
CLI_AGENTS = ("claude-code", "codex", "gemini-cli", "opencode")
_SOURCE_ROOT = Path(__file__).resolve().parents[3]


def cli_packages() -> list[str]:
    """npm package@version of the four agent CLIs, from agents/*/agent.yaml (the one source of truth)."""
    packages = [load_agent(name).package for name in CLI_AGENTS]
    missing = [name for name, p in zip(CLI_AGENTS, packages, strict=True) if p is None]
    if missing:
        raise UserError(f"agents {', '.join(missing)}: agent.yaml names no npm package (the images install it)")
    return [p for p in packages if p is not None]


def _templates() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("ptbench.export", "templates"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )


def _copy_source(dest: Path) -> None:
    """ptbench's own source (for the images to install): the package, pyproject.toml, README.md."""
    if not (_SOURCE_ROOT / "pyproject.toml").is_file():
        raise UserError(
            "ptbench export harbor needs ptbench's source checkout (pyproject.toml beside src/); run it from a clone"
        )
    (dest / "src").mkdir(parents=True)
    shutil.copytree(
        _SOURCE_ROOT / "src" / "ptbench",
        dest / "src" / "ptbench",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(_SOURCE_ROOT / name, dest / name)


def task_config(spec, name: str) -> dict:
    b = spec.budget
    env: dict = {
        "build_timeout_sec": 3600.0,
        "cpus": 16,
        "memory_mb": 128 * 1024,
        "storage_mb": 400 * 1024,
        "gpus": b.gpus,
        "workdir": "/app",
        # the clock of timer.sh starts once, when the container is up (see the module docstring)
        "healthcheck": {
            "command": f"test -s /app/.deadline || echo $(( $(date +%s) + {int(b.seconds)} )) > /app/.deadline",
            "interval_sec": 1.0,
            "retries": 3,
        },
    }
    if b.gpu_type:
        env["gpu_types"] = [b.gpu_type]
    verifier_env = {k: v for k, v in env.items() if k not in ("healthcheck", "workdir")}
    verifier_env["build_timeout_sec"] = 3600.0
    integrity = spec.integrity
    verifier_seconds = 2 * max(b.eval_minutes, 1) * 60 + len(integrity.checks) * integrity.check_minutes * 60 + 1800
    return {
        "schema_version": "1.4",
        # The workspace first: Harbor empties each artifact's path in the verifier before uploading it,
        # so /app after /app/final_model would wipe the model.
        "artifacts": [
            {
                "source": "/app",
                "destination": "workspace",
                "exclude": ["final_model", "*.safetensors", "*.bin", "*.pt", "*.gguf"],
            },
            {"source": "/app/final_model"},
        ],
        "task": {
            "name": f"ptbench/{name}",
            "description": f"Post-train {spec.base_model.id} for {spec.task.display} in {b.hours:g} h "
            f"on {b.gpus} x {b.gpu_type or 'GPU'} (ptbench campaign {spec.campaign})",
            "keywords": ["post-training", "ptbench", spec.task.name],
        },
        "metadata": {
            "ptbench_campaign": spec.campaign,
            "base_model": spec.base_model.id,
            "base_model_revision": spec.base_model.revision or "",
            "task": spec.task.name,
            "task_options": json.dumps(spec.task.options),
            "budget_hours": b.hours,
            "timer": "timer.sh counts from container start; [agent].timeout_sec is the hard limit",
        },
        "agent": {"timeout_sec": float(b.seconds)},
        "environment": env,
        "verifier": {
            "timeout_sec": float(verifier_seconds),
            "environment_mode": "separate",
            "environment": verifier_env,
        },
    }


def export_harbor(campaign_file: str | Path, out: str | Path) -> list[Path]:
    campaign = load_campaign(campaign_file)
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise UserError(f"{out}: not empty; export into a new folder (tasks are never overwritten)")
    seen: dict[tuple[str, str], TrialSpec] = {}
    for spec in expand(campaign):
        seen.setdefault((spec.base_model.display, spec.task.display), spec)
    env = _templates()
    baselines, roots = baseline_index(campaign)
    written = []
    for (base, task_label), spec in seen.items():
        name = f"{base}__{task_label}".replace("/", "-")
        tdir = out / name
        spec = spec.model_copy(
            update={"base_model": spec.base_model.model_copy(update={"path": None})}
        )  # the cloud has the hub, not our paths
        task = get_task(spec.task.name, **spec.task.options)
        prompt = render_prompt(spec, Path("/app"), task)
        atomic_write_text_mk(tdir / "instruction.md", prompt)
        atomic_write_text_mk(tdir / "task.toml", toml_out.dumps(task_config(spec, name)))
        ws = tdir / "environment" / "workspace"
        options = json.dumps(spec.task.options)
        atomic_write_text_mk(ws / "timer.sh", TIMER_SH, mode=0o755)
        atomic_write_text_mk(
            ws / "evaluate.sh",
            EVALUATE_SH.replace("@PYTHON@", "python")
            .replace("@TASK@", spec.task.name)
            .replace("@OPTIONS@", "'" + options.replace("'", "'\\''") + "'"),
            mode=0o755,
        )
        train = task.train_examples(spec.seed)
        if train:
            atomic_write_text_mk(ws / "data" / "train.jsonl", "".join(json.dumps(r) + "\n" for r in train))
        atomic_write_text_mk(
            tdir / "environment" / "Dockerfile",
            env.get_template("agent.Dockerfile.j2").render(
                torch=TORCH, python_packages=PYTHON_PACKAGES, clis=" ".join(cli_packages())
            ),
        )
        _copy_source(tdir / "environment" / "ptbench")
        atomic_write_text_mk(tdir / "tests" / "Dockerfile", env.get_template("eval.Dockerfile.j2").render(torch=TORCH))
        _copy_source(tdir / "tests" / "ptbench")
        atomic_write_text_mk(tdir / "tests" / "test.sh", TEST_SH, mode=0o755)
        # The agent in Harbor is the user's choice: no ptbench agent, so no check assumes a scripted one.
        verifier_spec = spec.model_copy(update={"agent": AgentRef(name=HARBOR_AGENT), "trial_id": name})
        atomic_write_text_mk(tdir / "tests" / "trial.json", verifier_spec.model_dump_json(indent=2))
        test_set, note = expected_test_set(spec)
        atomic_write_json(
            tdir / "tests" / "verify.json",
            {
                "scoring_policy": campaign.scoring.policy,
                "test_set": test_set,
                "test_set_note": note,
                "base_score": base_score(baselines, roots, spec),
                "eval_seconds": spec.budget.eval_minutes * 60,
            },
        )
        written.append(tdir)
    return written


HARBOR_AGENT = "harbor"  # not a folder under agents/: api_usage expects a trajectory from it


def expected_test_set(spec) -> tuple[dict | None, str]:
    """The identity (sha256, n) of the test set the campaign's evaluation scores, where it can be had
    here without the network (generated, data_path, or already in the HF cache); else None and why."""
    import datasets.config
    import huggingface_hub.constants

    saved = huggingface_hub.constants.HF_HUB_OFFLINE, datasets.config.HF_HUB_OFFLINE
    huggingface_hub.constants.HF_HUB_OFFLINE = datasets.config.HF_HUB_OFFLINE = True
    try:
        task = get_task(spec.task.name, **spec.task.options)
        identity = scored_set_identity(task.test_examples(spec.evaluation.limit), getattr(task, "dataset", {}))
        return {"sha256": identity["sha256"], "n": identity["n"]}, "pinned at export"
    except Exception as exc:  # noqa: BLE001  (not available here: the verifier records that it could not compare)
        return None, f"not pinned: the test set was not available offline at export ({type(exc).__name__})"
    finally:
        huggingface_hub.constants.HF_HUB_OFFLINE, datasets.config.HF_HUB_OFFLINE = saved


def harbor_warnings(campaign_file: str | Path) -> list[str]:
    """What the Harbor verifier cannot check the way the runner does, for the export's output."""
    campaign = load_campaign(campaign_file)
    checks = campaign.integrity.checks
    out = []
    for name in sorted(checks):
        if name in CHECKS and (why := CHECKS.get(name).harbor_unchecked):
            out.append(f"integrity check {name} {why}")
    local = [m for m in campaign.integrity.forbidden_models if "/" not in m or m.startswith(("/", ".", "~"))]
    if local:
        out.append(
            f"forbidden_models {', '.join(local)} are local folders the cloud verifier cannot read: model_identity "
            "will be unchecked there; name hub ids instead"
        )
    with_data = sorted({t.name for t in campaign.tasks if t.options.get("data_path")})
    if with_data:
        out.append(
            f"task(s) {', '.join(with_data)} read data_path, a folder of this machine: the cloud verifier cannot load "
            "their test sets there (evaluation fails, contamination is unchecked); drop data_path to load them from "
            "the hub"
        )
    local_bases = [b.id for b in campaign.base_models if b.path]
    if local_bases:
        out.append(
            f"base model(s) {', '.join(local_bases)} have a local path here; the agent and the verifier get the hub id "
            "at its revision instead"
        )
    return out


def atomic_write_text_mk(path: Path, text: str, mode: int | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text, mode=mode)


# The verifier: ptbench's evaluation (its own installed copy, not the agent's) and the checks on
# what the agent left, then Harbor's reward file. It never fails open: any error is reward 0.
TEST_SH = """#!/usr/bin/env bash
# Harbor verifier for a ptbench task: the integrity checks and the evaluation of /app/final_model with
# the evaluation image's ptbench, configured only by /tests; writes /logs/verifier/reward.json, verdict.json
# and checks/ (see ptbench.export.harbor_verify).
set -uo pipefail
mkdir -p /logs/verifier
cd /tmp  # -I and a working directory outside /app: nothing the agent wrote is importable
python -I -m ptbench.export.harbor_verify /tests /app/final_model /app /logs/verifier || true
test -s /logs/verifier/reward.json || echo '{"reward": 0.0, "verifier_error": 1}' > /logs/verifier/reward.json
"""
