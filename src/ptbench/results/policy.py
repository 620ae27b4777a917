"""The scoring policy: what a trial counts for when it has no valid score or integrity did not clear it.

A trial scores its own metric only when it finished with a model (`completed`, `timed_out`), has a
primary metric, and every integrity check says `clean`. Every other trial follows the policy:
`base_fallback` (the base model's zero-shot score on that task: the reference protocol, and what the
agent prompt promises), `exclude` (left out of the means) or `nan` (the cell becomes nan). Each
trial's rule is kept, so every table can say how many cells used which rule.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass
from typing import Literal, get_args

from ptbench.core.errors import UserError
from ptbench.results.schema import BaseModelInfo, ResultRecord, TaskInfo

# A check's verdict (integrity/report.py says what each means); the policy and the coverage read them.
Verdict = Literal["clean", "flagged", "unchecked", "not_applicable"]
VERDICTS: tuple[str, ...] = get_args(Verdict)
Policy = Literal["base_fallback", "exclude", "nan"]
POLICIES: tuple[str, ...] = ("base_fallback", "exclude", "nan")
# The campaign's `integrity.policy` (issue 12) may also say `show`: a flagged or unchecked trial keeps
# its own score, marked.
INTEGRITY_POLICIES: tuple[str, ...] = (*POLICIES, "show")
# The rule a trial's number came from; no_baseline = base_fallback asked, but no zero-shot score exists.
RULES: tuple[str, ...] = ("scored", "shown", "base_fallback", "excluded", "nan", "no_baseline")
SCORED_STATUSES = ("completed", "timed_out")
BASE_MODEL_AGENT = "base-model"  # the keyless agent that hands back the base model unchanged


def check_policy(policy: str, where: str, allowed: tuple[str, ...] = POLICIES) -> str:
    if policy not in allowed:
        raise UserError(f"{where}: unknown scoring policy {policy!r}; use one of {', '.join(allowed)}")
    return policy


def overall(verdicts: dict[str, str]) -> str:
    """One word for a trial's integrity verdicts: flagged beats unchecked beats clean.
    `not_applicable` checks are left out (they neither clear nor fault a trial); a trial none of
    whose checks applied is `not_applicable`; one with no verdict at all, or an unknown word,
    `unchecked`."""
    values = set(verdicts.values())
    if "flagged" in values:
        return "flagged"
    applied = values - {"not_applicable"}
    if not values or applied - {"clean"}:
        return "unchecked"
    return "clean" if applied else "not_applicable"


def integrity_of(record: ResultRecord) -> str:
    """flagged if any check flagged; unchecked if any is unchecked (or unknown) or none ran; else
    clean, or not_applicable where no check applied (overall)."""
    return overall(record.integrity)


def decided(integrity: str) -> bool:
    """Integrity leaves the trial its own score: every check that applied said clean (a check with no
    method for the task, `not_applicable`, is a fact of the task the agent cannot cause)."""
    return integrity in ("clean", "not_applicable")


def own_score(record: ResultRecord) -> float | None:
    """The trial's own score where it has a valid one (a scored status and a finite metric), else None."""
    m = record.primary_metric
    return m.value if record.status in SCORED_STATUSES and m is not None and math.isfinite(m.value) else None


def has_valid_score(record: ResultRecord) -> bool:
    return own_score(record) is not None


def baseline_setting(record: ResultRecord) -> str | None:
    """The setting label of a `ptbench baseline` record ("base (zero-shot)", "base (5-shot)",
    "instruct"), None for an agent's trial. Baseline records carry agent names `baseline-<slug>`."""
    return record.agent.label if record.agent.name.startswith("baseline-") else None


def is_zero_shot_base(record: ResultRecord) -> bool:
    return record.agent.name == "baseline-base-zero-shot"


def is_instruct(record: ResultRecord) -> bool:
    return record.agent.name == "baseline-instruct"


def _model_keys(base_model: BaseModelInfo) -> list[str]:
    """Ways a baseline's model may name a campaign's base model: label, hub id, folder name."""
    ident = base_model.id.rstrip("/")
    return [f"label:{base_model.label}", f"id:{ident}", f"name:{ident.rsplit('/', 1)[-1].lower()}"]


class BaselineIndex:
    """The base model's zero-shot score per (base model, task): from `ptbench baseline` records, else
    from the campaign's own `base-model` agent trials (the base model handed back unchanged)."""

    def __init__(self, records: list[ResultRecord]):
        self._scores: dict[str, dict[tuple[str, str], list[float]]] = {
            "baseline": defaultdict(list),
            "base-model agent": defaultdict(list),
        }
        for r in records:
            source = (
                "baseline" if is_zero_shot_base(r) else "base-model agent" if r.agent.name == BASE_MODEL_AGENT else None
            )
            score = own_score(r)
            if source is None or score is None:
                continue
            for key in _model_keys(r.base_model):
                for task in {r.task.name, r.task.label}:
                    self._scores[source][(key, task)].append(score)
        self.sources_used: set[str] = set()

    def lookup(self, trial: ResultRecord) -> float | None:
        return self.lookup_for(trial.base_model, trial.task)

    def lookup_for(self, base_model: BaseModelInfo, task_info: TaskInfo) -> float | None:
        for source, scores in self._scores.items():
            for key in _model_keys(base_model):
                for task in (task_info.label, task_info.name):
                    if values := scores.get((key, task)):
                        self.sources_used.add(source)
                        return statistics.fmean(values)
        return None


@dataclass
class ScoredTrial:
    record: ResultRecord
    value: float | None  # None: excluded
    rule: str  # one of RULES
    reason: str  # why the policy applied: the status, "flagged" or "unchecked"; "" when scored


def choose_rule(
    valid_score: bool, integrity: str, status: str, policy: str, integrity_policy: str | None = None
) -> tuple[str, str]:
    """(rule, reason) for one trial: `scored` only with a valid score and a clean integrity verdict;
    else `integrity_policy` (when set) for a trial whose only problem is its verdict, `policy` for
    the rest. The rule is scored | shown | excluded | nan | base_fallback (the caller looks the base
    score up; no_baseline where there is none). Also what the Harbor verifier applies."""
    if valid_score and decided(integrity):
        return "scored", ""
    if valid_score:
        reason, rule = integrity, integrity_policy or policy
    else:
        reason, rule = ("no_metric" if status in SCORED_STATUSES else status), policy
    return {"show": "shown", "exclude": "excluded", "nan": "nan"}.get(rule, "base_fallback"), reason


def score_trial(
    r: ResultRecord, baselines: BaselineIndex, policy: str, integrity_policy: str | None = None
) -> ScoredTrial:
    """Apply the policy to one agent trial. `integrity_policy`, when set, governs trials whose only
    problem is their integrity verdict (flagged or unchecked); `policy` governs the rest."""
    score = own_score(r)
    rule, reason = choose_rule(score is not None, integrity_of(r), r.status, policy, integrity_policy)
    if rule == "scored":
        return ScoredTrial(r, score, "scored", "")
    if rule == "shown":
        return ScoredTrial(r, score, "shown", reason)
    if rule == "excluded":
        return ScoredTrial(r, None, "excluded", reason)
    if rule == "nan":
        return ScoredTrial(r, math.nan, "nan", reason)
    base = baselines.lookup(r)
    return (
        ScoredTrial(r, base, "base_fallback", reason)
        if base is not None
        else ScoredTrial(r, math.nan, "no_baseline", reason)
    )


def marked_label(record: ResultRecord) -> str:
    """The agent's label, with a mark where the run was less contained than the default: an agent
    run with `sandbox: none` (it could see the host), one that held a real provider key
    (`allow_real_key`), or code evaluated with `allow_unisolated`."""
    label = record.agent.label
    # The sandbox's own fact, recorded by the runner (a plugin's sandbox included); a record written
    # before that field falls back to the built-in name that does not isolate.
    unsandboxed = (record.sandbox == "none") if record.sandbox_isolated is None else not record.sandbox_isolated
    if unsandboxed and "[unsandboxed]" not in label:
        label += " [unsandboxed]"
    if record.agent_credentials == "real_key" and "[real key]" not in label:
        label += " [real key]"
    isolation = (
        (record.evaluation.get("sandbox") or {}).get("isolation")
        if isinstance(record.evaluation.get("sandbox"), dict)
        else None
    )
    if isolation == "none" and "[unisolated code]" not in label:
        label += " [unisolated code]"
    return label
