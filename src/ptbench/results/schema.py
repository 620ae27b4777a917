"""`result.json`: the one record per trial that the collator reads (versioned)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

SCHEMA_VERSION = 1

Status = Literal["completed", "timed_out", "agent_failed", "no_model", "eval_failed", "setup_failed", "cancelled"]


class AgentInfo(BaseModel):
    name: str
    model: str | None = None
    label: str
    cli_version: str | None = None


class BaseModelInfo(BaseModel):
    id: str
    revision: str | None = None
    label: str


class TaskInfo(BaseModel):
    name: str
    version: str | None = None
    label: str


class Failure(BaseModel):
    stage: str
    kind: str  # e.g. no_gpu, timeout, agent_exit, eval_error, scheduler_time_limit, cancelled
    message: str = ""
    retryable: bool = False


class BudgetUsed(BaseModel):
    hours: float
    gpus: int
    gpu_type: str | None = None
    solve_seconds_used: float = 0.0
    solve_runs: int = 0


class Metric(BaseModel):
    name: str
    value: float
    stderr: float | None = None
    n: int


class Provenance(BaseModel):
    ptbench_version: str
    git_commit: str | None = None
    container_image: str | None = None
    container_digest: str | None = None  # sha256:<hex> of the .sif (containers/digests.json, PTBENCH_CONTAINER_DIGEST)
    host: str
    scheduler: str
    job_id: str | None = None
    # Which bootcamp data trained the model, as the agent's recipe reported it (final_model/ptbench_bootcamp.json:
    # config, data_hash, manifest_sha256, split, cases_used); None for agents that report none.
    bootcamp: dict[str, Any] | None = None


class MonitorSummary(BaseModel):
    """What the trial used during solve and evaluate (from monitor.jsonl, `ptbench.node.monitor`)."""

    samples: int
    monitored_seconds: float
    cpu_percent_mean: float | None = None
    cpu_percent_max: float | None = None
    rss_peak_bytes: int | None = None
    trial_dir_peak_bytes: int | None = None
    disk_free_min_bytes: int | None = None
    gpu_count: int | None = None  # the GPU fields only where NVML saw the job's GPUs
    gpu_util_mean: float | None = None
    gpu_util_max: float | None = None
    gpu_memory_peak_bytes: int | None = None
    gpu_hours: float | None = None


class ResultRecord(BaseModel):
    schema_version: int = SCHEMA_VERSION
    campaign: str
    trial_id: str
    agent: AgentInfo
    base_model: BaseModelInfo
    task: TaskInfo
    seed: int
    status: Status
    failure: Failure | None = None
    budget: BudgetUsed
    primary_metric: Metric | None = None
    extra_metrics: dict[str, Any] = Field(default_factory=dict)
    integrity: dict[str, str] = Field(default_factory=dict)  # check -> clean | flagged | unchecked | not_applicable
    integrity_detail: dict[str, str] = Field(
        default_factory=dict
    )  # check -> reason (checks/<check>.json has the evidence)
    # several integrity judges: their agreement (results.agreement.agreement) as checks/judge.json records it
    integrity_judge_agreement: dict[str, Any] | None = None
    sandbox: str | None = (
        None  # the sandbox the agent really ran in: none | bwrap | apptainer, "unknown" if it never ran
    )
    # Whether that sandbox isolated the agent (its registered facts, so a plugin's sandbox answers for
    # itself); None: it never ran, or a record written before this field.
    sandbox_isolated: bool | None = None
    deadline_kill: str | None = None  # how the deadline reached the agent's processes: cgroup.kill | subreaper
    agent_credentials: str | None = (
        None  # gateway (trial token) | login (subscription) | real_key (allow_real_key) | none
    )
    network: str | None = None  # what the agent could reach: gateway (loopback + the trial gateway) | host
    hf_cache: str | None = (
        None  # the agent's HF cache: overlay (per-trial copy-on-write) | read-only | shared (sandbox none)
    )
    evaluation: dict[str, Any] = Field(default_factory=dict)
    usage: dict[str, Any] = Field(default_factory=dict)
    provenance: Provenance
    monitor: MonitorSummary | None = None
    finished_at: float


# version N -> N+1, for records written by an older ptbench (none yet: version 1 is the first)
RESULT_MIGRATIONS: dict[int, Any] = {}


def read_record(raw: bytes | str, *, where: str) -> ResultRecord:
    """The one reader of `result.json`: a newer schema is refused with one line (NewerSchema), an
    older one migrated, anything invalid a UserError naming the field."""
    from ptbench.core.versioned import parse_versioned

    return parse_versioned(ResultRecord, raw, current=SCHEMA_VERSION, migrations=RESULT_MIGRATIONS, where=where)
