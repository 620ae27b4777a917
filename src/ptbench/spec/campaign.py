"""Pydantic models of a campaign file: the matrix of trials and how to run them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_serializer, model_validator

_SLUG_OK = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class Strict(BaseModel):
    """Base for every file format: unknown keys are errors, never silently ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class AgentRef(Strict):
    name: str = Field(description="folder name under agents/ (e.g. reference, claude-code)")
    model: str | None = Field(
        default=None, description="model the agent drives (e.g. claude-sonnet-4-5); none for keyless agents"
    )
    label: str | None = Field(default=None, description="name in tables and trial ids; defaults to name[-model]")
    options: dict[str, Any] = Field(default_factory=dict, description="agent-specific template variables")

    @property
    def display(self) -> str:
        if self.label:
            return self.label
        return f"{self.name}-{self.model}" if self.model else self.name


class BaseModelRef(Strict):
    id: str = Field(description="Hugging Face id, e.g. Qwen/Qwen3-1.7B-Base")
    revision: str | None = Field(default=None, description="pinned commit of the model repository")
    path: str | None = Field(default=None, description="local copy to use instead of the hub (offline clusters)")
    path_on_nodes: bool = Field(
        default=False,
        description="`path` exists only on the compute nodes: `validate` does not look for it on this machine",
    )
    label: str | None = None

    @model_serializer(mode="wrap")
    def _without_default_path_on_nodes(self, handler):
        # Where validation looks for the path does not change a trial: at its default it stays out of
        # trial.json, so trials planned before the field existed still match their campaign.
        data = handler(self)
        if isinstance(data, dict) and not self.path_on_nodes:
            data.pop("path_on_nodes", None)
        return data

    @property
    def display(self) -> str:
        return self.label or self.id.rsplit("/", 1)[-1]


class TaskRef(Strict):
    name: str = Field(description="registered task name (see `ptbench tasks`)")
    options: dict[str, Any] = Field(default_factory=dict, description="task options, e.g. {digits: 2}")
    label: str | None = Field(
        default=None, description="name in tables and trial ids; needed when one task appears twice"
    )

    @property
    def display(self) -> str:
        return self.label or self.name


class Budget(Strict):
    hours: float = Field(description="the agent's wall-clock budget")
    gpus: int = Field(default=1, ge=0)
    gpu_type: str | None = Field(default=None, description="e.g. H100; schedulers turn it into gres / requirements")
    grace_seconds: float = Field(default=30, ge=0, description="SIGTERM -> SIGKILL delay at the deadline")
    warn_seconds: float | None = Field(
        default=None,
        ge=0,
        description="warning this long before the deadline (default: 10% of the budget, at most 10 min)",
    )
    eval_minutes: float = Field(default=60, ge=0, description="allowance for collect + evaluate after the agent")
    margin_minutes: float = Field(
        default=10, ge=0, description="extra scheduler time so the watchdog always acts first"
    )
    monitor_seconds: float = Field(
        default=60, gt=0, description="GPU/CPU/RAM/disk sampling interval during solve and evaluate (monitor.jsonl)"
    )

    @model_serializer(mode="wrap")
    def _without_default_monitor(self, handler):
        # Sampling does not change a trial's outcome: at its default it stays out of trial.json, so
        # trials planned before the monitor existed still match their campaign when re-planned.
        data = handler(self)
        if isinstance(data, dict) and self.monitor_seconds == 60:
            data.pop("monitor_seconds", None)
        return data

    @field_validator("hours")
    @classmethod
    def _positive(cls, v: float) -> float:
        if v <= 0:
            raise ValueError("the budget must be positive hours (e.g. hours: 10)")
        return v

    @property
    def seconds(self) -> float:
        return self.hours * 3600

    @property
    def warn_before(self) -> float:
        if self.warn_seconds is not None:
            return min(self.warn_seconds, self.seconds)
        return min(0.1 * self.seconds, 600.0)

    @property
    def scheduler_minutes(self) -> int:
        """Wall time a scheduler should allow the whole job: budget + grace + evaluation + margin."""
        total = self.seconds / 60 + self.grace_seconds / 60 + self.eval_minutes + self.margin_minutes
        return max(1, int(-(-total // 1)))


class Backend(Strict):
    # any registered backend (a plugin's too): `validate` checks the name against the registry
    name: str = Field(default="local", description="local, slurm, htcondor or a plugin's backend")
    options: dict[str, Any] = Field(
        default_factory=dict, description="backend-specific settings (partition, account, ...)"
    )


class Evaluation(Strict):
    # auto, or a registered engine (transformers, vllm, a plugin's): `validate` checks the name
    engine: str = "auto"
    limit: int | None = Field(default=None, ge=1, description="evaluate only the first N test examples")
    batch_size: int = Field(default=32, ge=1)
    # harness: ptbench's chat template for the base model's family; model: the final model's own
    # (recorded in the metrics); or a family name (qwen3, gemma3, smollm3, llama3).
    chat_template: Literal["harness", "model", "qwen3", "gemma3", "smollm3", "llama3"] = "harness"


class Scoring(Strict):
    """How the collator scores a trial without a valid score (no model, failures) or with a flagged
    or unchecked integrity verdict; base_fallback is the reference protocol."""

    policy: Literal["base_fallback", "exclude", "nan"] = Field(
        default="base_fallback",
        description="base_fallback: the base model's zero-shot score; exclude: leave it out; nan: the cell becomes nan",
    )


REHEARSAL_SUFFIX = "-rehearsal"  # `run --rehearse` writes campaign <name>-rehearsal beside <name>


class JudgeSettings(Strict):
    agent: str = Field(default="codex", description="agent scaffold (folder under agents/) run in judge mode")
    model: str | None = Field(default=None, description="model the judge CLI drives")
    minutes: float = Field(default=20, gt=0, description="the judge's own wall-clock budget")
    options: dict[str, Any] = Field(default_factory=dict, description="agent template variables for the judge run")


class Integrity(Strict):
    """`integrity:` in a campaign: which checks run after collect, and what aggregates do with a
    run that is flagged or could not be checked (base_fallback: the base model's zero-shot score;
    exclude: left out; show: its own score, marked).

    Check names are plugin names (ptbench.integrity.checks.CHECKS), checked by `validate` against
    the registry, not here (spec is the lowest layer). Other keys are per-check settings,
    `<check name>: {...}`, validated by that check's settings model in `validate`; a key that is
    neither a field nor a check is refused there with did-you-mean."""

    model_config = ConfigDict(extra="allow", frozen=True)

    policy: Literal["base_fallback", "exclude", "show"] = "base_fallback"
    checks: list[str] = Field(default=["contamination", "memorization", "model_identity", "api_usage"])
    require: list[str] = Field(
        default_factory=list,
        description="checks that must decide every trial: `validate` refuses a task a required check has no "
        "method for, and a required check that proves not applicable at run time is `unchecked`",
    )
    ngram: int = Field(default=13, ge=3, le=50, description="n-gram length (tokens) of the contamination check")
    forbidden_models: list[str] = Field(
        default_factory=list,
        description="local model folders or hub ids final_model must not be closer to than the base",
    )
    allowed_sources: list[str] = Field(
        default_factory=list,
        description="paths (globs, relative to the workspace) or sha256 hashes of files that are not contamination",
    )
    check_minutes: float = Field(default=20, gt=0, description="time limit of each check")
    judge: JudgeSettings | list[JudgeSettings] | None = Field(
        default=None, description="the LLM judge, or a list of judges whose majority per question decides"
    )

    @model_validator(mode="after")
    def _required_are_run(self) -> Integrity:
        missing = [c for c in self.require if c not in self.checks]
        if missing:
            raise ValueError(
                f"require: {missing[0]!r} is not among the checks run ({', '.join(self.checks)}); add it to checks"
            )
        return self

    @model_validator(mode="after")
    def _judge_configured(self) -> Integrity:
        if "judge" in self.checks and not self.judge:
            raise ValueError("the 'judge' check needs a judge: {agent: codex, model: ...} section (or a list of them)")
        return self


class Campaign(Strict):
    name: str = Field(description="campaign name: its folder under results_dir")
    agents: list[AgentRef] = Field(min_length=1)
    base_models: list[BaseModelRef] = Field(min_length=1)
    tasks: list[TaskRef] = Field(min_length=1)
    seeds: list[int] = Field(default=[0], min_length=1)
    budget: Budget
    backend: Backend = Backend()
    # auto: bwrap where it can run (else a setup error); `none` only when asked for, and marked in tables
    # (or a registered sandbox: a plugin's too; `validate` checks the name)
    sandbox: str = "auto"
    sandbox_options: dict[str, Any] = Field(default_factory=dict)
    results_dir: str = "results"
    parallelism: int = Field(default=1, ge=1)
    evaluation: Evaluation = Evaluation()
    max_continuations: int = Field(default=0, ge=0, description="times an agent that quits early may be resumed")
    max_requeues: int = Field(default=3, ge=0, description="times a preempted or evicted job may resume")
    scoring: Scoring = Scoring()
    integrity: Integrity = Integrity()

    @field_validator("name")
    @classmethod
    def _slug(cls, v: str) -> str:
        if not _SLUG_OK.match(v):
            raise ValueError("use letters, digits, '.', '_' or '-' (it becomes a folder name)")
        return v

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        """Accept `tasks: [gsm8k]`, `agents: [reference]`, `base_models: [Qwen/Qwen3-1.7B-Base]`."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for key, field in (("tasks", "name"), ("agents", "name"), ("base_models", "id")):
            items = data.get(key)
            if isinstance(items, list):
                data[key] = [{field: it} if isinstance(it, str) else it for it in items]
        if isinstance(data.get("backend"), str):
            data["backend"] = {"name": data["backend"]}
        return data

    @property
    def campaign_dir(self) -> Path:
        """results_dir/<name>; a relative results_dir is taken from the current directory."""
        return Path(self.results_dir).expanduser().resolve() / self.name
