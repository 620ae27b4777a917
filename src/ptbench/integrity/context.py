"""What a check sees of a trial: its directory, its spec, and where its cache layer is."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ptbench.agents.traces.model import TRAJECTORY_SCHEMA
from ptbench.core.errors import UserError
from ptbench.core.versioned import versioned_dict


@dataclass
class CheckContext:
    trial_dir: Path
    spec: Any  # ptbench.trial.TrialSpec
    cache_dirs: list[Path] = field(default_factory=list)  # the trial's cache layer (HF hub / datasets)
    since: float | None = None  # when the trial's agent first started: cache entries newer than this are its own
    # The trial's own copy-on-write layer (hf-layer/upper): everything in it is the agent's, whatever its mtime.
    layer_dirs: list[Path] = field(default_factory=list)

    workspace = property(lambda self: self.trial_dir / "workspace")
    home = property(lambda self: self.trial_dir / "home")
    agent_dir = property(lambda self: self.trial_dir / "agent")
    final_model = property(lambda self: self.trial_dir / "final_model")
    # The gateway's record of every model call (harness-only: never bound into the sandbox).
    transcript = property(lambda self: self.trial_dir / "record" / "transcript.jsonl")

    @property
    def config(self):
        return self.spec.integrity

    def state_folders(self) -> list[str]:
        """HOME-relative folders of the trial's agent CLI's own state, from its agent.yaml
        (`state_folders`): session logs hold every tool output the agent saw, test questions it was
        allowed to look at included, so they are scanned as data only where the trajectory names a
        file in them. Only the trial's own CLI: another CLI's folder in HOME is the agent's data.
        An agent whose agent.yaml cannot be read here makes the check `unchecked`: neither
        excluding nothing (an honest CLI's logs read as contamination) nor guessing is right."""
        from ptbench.agents.spec import load_agent

        try:
            return list(load_agent(self.spec.agent.name).state_folders)
        except UserError:
            # An agent no agent.yaml here describes (a trial imported from Harbor, an agent since
            # removed): no folder is excluded, so all of HOME is scanned as the agent's data (stricter,
            # never a free pass).
            return []

    def trajectory(self) -> dict[str, Any] | None:
        """agent/trajectory.json at this version (core.versioned), or None when it is missing,
        unreadable or newer than this ptbench: a check that needs it then reports itself unchecked."""
        path = self.agent_dir / "trajectory.json"
        try:
            return versioned_dict(path.read_bytes(), current=TRAJECTORY_SCHEMA, where=str(path))
        except (OSError, UserError):
            return None

    def fresh(self, cache: Path, entry: Path) -> bool:
        """Whether `entry` (a folder in cache dir `cache`) was written during the trial."""
        return self.since is None or cache in self.layer_dirs or entry.stat().st_mtime >= self.since

    def to_json(self) -> dict[str, Any]:
        return {
            "trial_dir": str(self.trial_dir),
            "cache_dirs": [str(p) for p in self.cache_dirs],
            "since": self.since,
            "layer_dirs": [str(p) for p in self.layer_dirs],
        }


def trajectory_texts(trajectory: dict[str, Any] | None, *, outputs: bool = False) -> list[tuple[str, str]]:
    """(where, text) of every message and tool-call argument (and, with `outputs`, tool output) in
    a common-format trajectory (ptbench.agents.traces.model.Trajectory)."""
    out: list[tuple[str, str]] = []
    if not trajectory:
        return out
    for i, step in enumerate(trajectory.get("steps") or []):
        if not isinstance(step, dict):
            continue
        if isinstance(step.get("text"), str):
            out.append((f"step {i} ({step.get('kind')})", step["text"]))
        call = step.get("tool_call")
        if isinstance(call, dict):
            args = call.get("arguments")
            out.append((f"step {i} tool {call.get('name')}", args if isinstance(args, str) else json.dumps(args)))
            if outputs and isinstance(call.get("output"), str):
                out.append((f"step {i} tool {call.get('name')} output", call["output"]))
    return out
