"""What a check reports, and the files that carry its verdict (`checks/<check>.json`,
`checks/verdicts.json`).

A verdict is `clean`, `flagged` (with evidence), `unchecked` (with the reason: the check should
have decided and could not) or `not_applicable` (with the reason: the check has no method for the
trial's task, or the campaign is too small for it to have power: facts of the task and the campaign
that the agent cannot cause). Anything that is not a well-formed report the harness wrote itself
reads as `unchecked`: a missing file, a corrupt one, an unknown verdict. A check can never become
`clean` or `not_applicable` by failing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from ptbench.results.agreement import recorded_fields

# The verdicts and the one word for a trial's verdicts live with the scoring policy, which reads
# them; re-exported here.
from ptbench.results.policy import VERDICTS, Verdict
from ptbench.results.policy import overall as overall

VERDICTS_FILE = "verdicts.json"
SUMMARY_FILE = "summary.json"
MAX_EVIDENCE = 50  # per check; the count of all findings is in details


class Unchecked(Exception):
    """Raised by a check that cannot decide (data unavailable, unreadable model, ...)."""


class NotApplicable(Exception):
    """Raised by a check that has no method for this trial, decided only from facts the agent cannot
    touch: the task's name and options and the harness's own copy of its data (never the workspace,
    the trial's outputs or anything the agent wrote). The trial's score is kept; a campaign that
    requires the check refuses it at `validate` time (or, where only the run can tell, the verdict
    becomes `unchecked`)."""


class Finding(BaseModel):
    """What a check function returns."""

    verdict: Verdict
    reason: str
    evidence: list[dict[str, Any]] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)


class CheckReport(Finding):
    """`checks/<check>.json`, written by the harness only."""

    check: str
    harness_version: str
    started_at: float
    seconds: float


def unchecked(check: str, reason: str, *, version: str, started_at: float, seconds: float = 0.0) -> CheckReport:
    return CheckReport(
        check=check, verdict="unchecked", reason=reason, harness_version=version, started_at=started_at, seconds=seconds
    )


def read_verdicts(checks_dir: Path, expected: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """(verdicts, reasons) for the result record. A check that was expected but has no valid
    verdict is `unchecked`; an empty or unreadable verdicts.json never means clean."""
    verdicts: dict[str, str] = {}
    reasons: dict[str, str] = {}
    try:
        raw = json.loads((checks_dir / VERDICTS_FILE).read_text())
    except (OSError, ValueError):
        raw = {}
    for name in sorted(set(expected) | set(raw if isinstance(raw, dict) else {})):
        value = raw.get(name) if isinstance(raw, dict) else None
        verdicts[name] = value if value in VERDICTS else "unchecked"
        try:
            report = CheckReport.model_validate_json((checks_dir / f"{name}.json").read_bytes())
            reasons[name] = report.reason
            if report.verdict != verdicts[name]:  # the two files disagree: trust neither
                verdicts[name], reasons[name] = "unchecked", f"verdicts.json and {name}.json disagree"
        except (OSError, ValidationError, ValueError):
            if verdicts[name] != "unchecked":
                verdicts[name] = "unchecked"
            reasons[name] = f"no valid checks/{name}.json"
    return verdicts, reasons


def read_judge_agreement(checks_dir: Path, check: str = "judge") -> dict[str, Any] | None:
    """The integrity judges' agreement that `checks/judge.json` holds when several judges answered
    (for the result record's tables); None with one judge, or without a well-formed report."""
    try:
        report = CheckReport.model_validate_json((checks_dir / f"{check}.json").read_bytes())
    except (OSError, ValidationError, ValueError):
        return None
    return recorded_fields(report.details.get("agreement"))
