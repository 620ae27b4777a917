"""A trial's directory and the files that are the contract between its stages.

results/<campaign>/<trial-id>/
  trial.json   resolved spec (immutable once written)      state.json  stage markers, time used
  events.jsonl lifecycle events                            prompt.txt  what the agent was told
  workspace/   the agent's working directory               agent/      native log, trajectory
  final_model/ what the agent left                         checks/     integrity verdicts
  eval/        metrics.json, samples                       result.json the record the collator reads
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, model_serializer

from ptbench.core.errors import UserError
from ptbench.core.files import append_jsonl, atomic_write_json, atomic_write_text
from ptbench.core.locks import file_lock
from ptbench.core.secrets import redact_text, secret_env_values
from ptbench.core.versioned import NewerSchema, parse_versioned
from ptbench.spec.campaign import AgentRef, BaseModelRef, Budget, Evaluation, Integrity, Strict, TaskRef

STAGES = ("prepare", "solve", "collect", "integrity", "evaluate", "record")
Stage = Literal["prepare", "solve", "collect", "integrity", "evaluate", "record"]


TRIAL_SCHEMA = 1


class TrialSpec(Strict):
    """Everything that determines a trial's outcome; its hash detects a changed campaign."""

    schema_version: int = TRIAL_SCHEMA
    campaign: str
    trial_id: str
    agent: AgentRef
    base_model: BaseModelRef
    task: TaskRef
    seed: int
    budget: Budget
    sandbox: str = "auto"
    sandbox_options: dict[str, Any] = Field(default_factory=dict)
    evaluation: Evaluation = Evaluation()
    max_continuations: int = 0
    max_requeues: int = 3
    integrity: Integrity = Integrity()

    @model_serializer(mode="wrap")
    def _omit_default_integrity(self, handler):
        # Trials planned before `integrity:` existed keep their trial.json text (and hash) unchanged.
        data = handler(self)
        if isinstance(data, dict) and self.integrity == Integrity():
            data.pop("integrity", None)
        return data

    def spec_hash(self) -> str:
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()[:16]

    @classmethod
    def read(cls, path: Path) -> TrialSpec:
        """trial.json, through core.versioned (a newer one refused with one line); FileNotFoundError
        passes through."""
        raw = path.read_bytes()
        try:
            return parse_versioned(cls, raw, current=TRIAL_SCHEMA, where=str(path))
        except NewerSchema:
            raise
        except UserError as exc:
            msg = exc.args[0].removeprefix(f"{path}: ")[:300]
            raise UserError(
                f"{path}: corrupt trial spec ({msg}); re-plan with `ptbench plan CAMPAIGN --replace`"
            ) from None


class Attempt(BaseModel):
    number: int
    started_at: float
    host: str
    pid: int
    job_id: str | None = None
    ended_at: float | None = None
    outcome: str | None = None


class StageMark(BaseModel):
    done_at: float
    outcome: str = "ok"
    detail: dict[str, Any] = Field(default_factory=dict)


STATE_SCHEMA = 1


class TrialState(BaseModel):
    """Mutable progress of a trial: written atomically by the runner only (versioned: core.versioned)."""

    schema_version: int = STATE_SCHEMA
    stages: dict[str, StageMark] = Field(default_factory=dict)
    solve_seconds_used: float = 0.0
    solve_runs: int = 0
    attempts: list[Attempt] = Field(default_factory=list)
    failure: dict[str, Any] | None = None

    def next_stage(self) -> str | None:
        return next((s for s in STAGES if s not in self.stages), None)


class TrialDir:
    """Paths and file access for one trial directory."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).resolve()

    # ---- paths -------------------------------------------------------------------------
    trial_json = property(lambda self: self.path / "trial.json")
    state_json = property(lambda self: self.path / "state.json")
    events_jsonl = property(lambda self: self.path / "events.jsonl")
    result_json = property(lambda self: self.path / "result.json")
    prompt_txt = property(lambda self: self.path / "prompt.txt")
    workspace = property(lambda self: self.path / "workspace")
    agent_dir = property(lambda self: self.path / "agent")
    final_model = property(lambda self: self.path / "final_model")
    checks_dir = property(lambda self: self.path / "checks")
    eval_dir = property(lambda self: self.path / "eval")
    home = property(lambda self: self.path / "home")  # the agent's private HOME
    hf_layer = property(
        lambda self: self.path / "hf-layer"
    )  # the agent's copy-on-write HF cache layer (upper/ = its changes)
    cancel_marker = property(lambda self: self.path / "cancel_requested")
    runner_pid = property(lambda self: self.path / "runner.pid")

    @property
    def eval_cache(self) -> Path:
        """The campaign's harness-only evaluation cache (or $PTBENCH_EVAL_CACHE): next to the trials,
        never bound into any trial's sandbox (judge verdicts, references, memorization base scores)."""
        return Path(os.environ.get("PTBENCH_EVAL_CACHE") or self.path.parent / ".harness" / "eval-cache")

    @property
    def id(self) -> str:
        return self.path.name

    # ---- spec / state ------------------------------------------------------------------
    @cached_property
    def spec(self) -> TrialSpec:
        try:
            return TrialSpec.read(self.trial_json)
        except FileNotFoundError:
            raise UserError(
                f"{self.path}: not a trial directory (no trial.json; plan it with `ptbench plan CAMPAIGN`)"
            ) from None

    def load_state(self) -> TrialState:
        if not self.state_json.exists():
            return TrialState()
        try:
            return parse_versioned(TrialState, self.state_json.read_bytes(), current=STATE_SCHEMA, where="state.json")
        except NewerSchema as exc:
            raise UserError(f"{self.state_json}: {str(exc).removeprefix('state.json: ')}") from None
        except UserError as exc:
            msg = str(exc).removeprefix("state.json: ")[:160]
            raise UserError(
                f"{self.state_json}: corrupt state file ({msg}); move it aside to restart the trial from the beginning"
            ) from None

    def save_state(self, state: TrialState) -> None:
        atomic_write_json(self.state_json, state)

    def event(self, kind: str, /, **fields: Any) -> None:  # positional-only: a field may be called "kind"
        record = {"time": time.time(), "event": kind, "host": _HOST, **fields}
        # An event may carry a message from anywhere (a provider's error, a judge's reply): redacted.
        text = redact_text(json.dumps(record, default=str), secret_env_values())
        append_jsonl(self.events_jsonl, json.loads(text))

    def try_lock(self):
        """Hold the trial's lock while the block runs; yields False (and holds nothing) when a
        runner is working on the trial. The one guard between a runner and anyone recording for it."""
        return file_lock(self.path / ".lock", wait=False)

    def write_runner_pid(self) -> None:
        """runner.pid: "<pid> <host>" of the runner working on the trial now."""
        atomic_write_text(self.runner_pid, f"{os.getpid()} {_HOST}\n")

    def read_runner_pid(self) -> tuple[int, str] | None:
        try:
            pid, host = self.runner_pid.read_text().split()
            return int(pid), host
        except (FileNotFoundError, ValueError):
            return None

    def read_result(self) -> dict[str, Any] | None:
        try:
            return json.loads(self.result_json.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return None


_HOST = socket.gethostname()
