"""Expand a campaign into trials: stable, readable ids and one directory each.

Re-planning is idempotent: an existing trial with the same resolved spec is kept as it is
(finished ones are reported as such and skipped by every backend); a trial whose spec changed is
refused unless the user asks to replace it, and then the old directory is moved aside, not deleted.
Everything is checked before the first directory is created.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

from ptbench.core.errors import UserError
from ptbench.core.files import atomic_write_json, atomic_write_text, slug
from ptbench.results.policy import SCORED_STATUSES
from ptbench.results.schema import Status
from ptbench.spec.campaign import Campaign
from ptbench.trial import TrialDir, TrialSpec


def trial_id(spec_parts: tuple[str, str, str, int]) -> str:
    agent, base, task, seed = spec_parts
    return f"{slug(agent)}__{slug(base)}__{slug(task)}__s{seed}"


def expand(campaign: Campaign) -> list[TrialSpec]:
    """Every (agent, base model, task, seed) combination as a resolved trial spec."""
    specs = []
    common: dict[str, Any] = dict(
        campaign=campaign.name,
        budget=campaign.budget,
        sandbox=campaign.sandbox,
        sandbox_options=campaign.sandbox_options,
        evaluation=campaign.evaluation,
        max_continuations=campaign.max_continuations,
        max_requeues=campaign.max_requeues,
        integrity=campaign.integrity,
    )
    bases = [
        b.model_copy(update={"path": str(Path(b.path).expanduser().resolve())}) if b.path else b
        for b in campaign.base_models
    ]
    for agent in campaign.agents:
        for base in bases:
            for task in campaign.tasks:
                for seed in campaign.seeds:
                    tid = trial_id((agent.display, base.display, task.display, seed))
                    specs.append(
                        TrialSpec.model_construct(
                            schema_version=1,
                            trial_id=tid,
                            agent=agent,
                            base_model=base,
                            task=task,
                            seed=seed,
                            **common,
                        )
                    )
    return specs


@dataclass
class Plan:
    campaign: Campaign
    campaign_dir: Path
    trials: list[TrialDir] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    finished: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)

    @property
    def unfinished(self) -> list[TrialDir]:
        done = set(self.finished)
        return [t for t in self.trials if t.id not in done]


def check_writable(directory: Path) -> None:
    probe = directory
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise UserError(
            f"results directory {directory} is not writable ({probe} does not allow writing); set results_dir to a "
            "folder you own"
        )


def check_unique_ids(campaign: Campaign, specs: list[TrialSpec]) -> None:
    seen: set[str] = set()
    for s in specs:
        if s.trial_id in seen:
            raise UserError(
                f"campaign '{campaign.name}': two trials get the id '{s.trial_id}' (give the agents, models or tasks "
                "distinct labels)"
            )
        seen.add(s.trial_id)


def plan_campaign(campaign: Campaign, *, replace: bool = False, source: str | None = None) -> Plan:
    specs = expand(campaign)
    check_unique_ids(campaign, specs)
    cdir = campaign.campaign_dir
    check_writable(cdir)
    plan = Plan(campaign=campaign, campaign_dir=cdir)
    texts = [s.model_dump_json(indent=2) + "\n" for s in specs]
    changed = []
    exists = cdir.is_dir()
    for s, text in zip(specs, texts, strict=True):
        tdir = cdir / s.trial_id
        trial = TrialDir(tdir)
        plan.trials.append(trial)
        if not exists:
            continue
        try:
            old = trial.trial_json.read_text()
        except FileNotFoundError:
            continue
        if old == text:
            if trial.result_json.exists():
                plan.finished.append(s.trial_id)
            continue
        other = _campaign_of(old)
        if other != campaign.name:
            raise UserError(
                f"{tdir}: this trial directory belongs to campaign '{other}', not '{campaign.name}' (use another "
                "results_dir or campaign name)"
            )
        changed.append(s.trial_id)
    if changed and replace:
        from ptbench.status import runner_alive

        for tid in changed:
            trial = TrialDir(cdir / tid)
            with trial.try_lock() as idle:
                if not idle or runner_alive(trial):
                    raise UserError(
                        f"{trial.path}: a runner is still working on this trial; cancel it (`ptbench cancel`) before "
                        "--replace"
                    )
    if changed and not replace:
        raise UserError(
            f"campaign '{campaign.name}': {len(changed)} trial(s) exist with a different spec (e.g. {changed[0]}); "
            "re-run with --replace to move them aside and start them again"
        )
    cdir.mkdir(parents=True, exist_ok=True)
    atomic_write_json(
        cdir / "campaign.json",
        {"name": campaign.name, "source": source, "planned_at": time.time(), "spec": campaign.model_dump(mode="json")},
    )
    changed_set = set(changed)
    for trial, s, text in zip(plan.trials, specs, texts, strict=True):
        if s.trial_id in changed_set:
            _move_aside(trial)
            plan.replaced.append(s.trial_id)
        elif exists and trial.trial_json.exists():
            continue
        trial.path.mkdir(exist_ok=True)
        atomic_write_text(trial.trial_json, text)
        plan.created.append(s.trial_id)
    return plan


def _campaign_of(trial_json_text: str) -> str | None:
    try:
        return json.loads(trial_json_text).get("campaign")
    except (json.JSONDecodeError, AttributeError):
        return None


def _move_aside(trial: TrialDir) -> None:
    dest = trial.path.parent / ".replaced" / f"{trial.id}-{time.strftime('%Y%m%dT%H%M%S')}"
    dest.parent.mkdir(exist_ok=True)
    trial.path.rename(dest)


# `run --retry-failed` / `--retry-cancelled`: the result statuses each one starts again. Scored ones
# (`completed`, `timed_out`: the agent used its budget and its model was evaluated) are outcomes, never
# retried; "failed" is every other status of the result schema but `cancelled`, so a new one joins it.
RETRY_STATUSES = {
    "failed": tuple(s for s in get_args(Status) if s not in (*SCORED_STATUSES, "cancelled")),
    "cancelled": ("cancelled",),
}


def retry_finished(plan: Plan, statuses: set[str]) -> list[str]:
    """Start again the finished trials whose result status is in `statuses`: each folder moves whole to
    `<campaign>/.attempts/<trial id>/<n>/` (n = 1, 2, ...: an earlier attempt is never overwritten or
    deleted; a dot folder, so collate and report never count it) and a fresh folder with the same
    trial.json takes its place. A trial a runner still holds is refused, as `--replace` refuses it."""
    from ptbench.status import runner_alive

    retried = []
    for trial in plan.trials:
        if trial.id not in plan.finished or (trial.read_result() or {}).get("status") not in statuses:
            continue
        with trial.try_lock() as idle:
            if not idle or runner_alive(trial):
                raise UserError(
                    f"{trial.path}: a runner is still working on this trial; wait for it (or `ptbench cancel` it) "
                    "before retrying"
                )
            text = trial.trial_json.read_text()
            attempts = plan.campaign_dir / ".attempts" / trial.id
            attempts.mkdir(parents=True, exist_ok=True)
            n = 1 + max((int(p.name) for p in attempts.iterdir() if p.name.isdigit()), default=0)
            trial.path.rename(attempts / str(n))
            trial.path.mkdir()
            atomic_write_text(trial.trial_json, text)
        trial.__dict__.pop("spec", None)  # the cached spec belongs to the folder moved aside
        retried.append(trial.id)
    done = set(retried)
    plan.finished = [t for t in plan.finished if t not in done]
    return retried


def load_plan(campaign_dir: Path) -> list[TrialDir]:
    """Trials of an already planned campaign directory, in id order."""
    return [TrialDir(p.parent) for p in sorted(campaign_dir.glob("*/trial.json"))]
