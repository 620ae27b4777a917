"""Integrity checks run by the harness after collect: contamination, memorization (the model
against held-out siblings), model identity, forbidden API use, and an optional LLM judge.
Verdicts are `clean`, `flagged` (with evidence), `unchecked` (with the reason) or `not_applicable`
(no method for the task, or the campaign too small: nothing the agent can cause); a check that could
not run is never `clean`."""

from ptbench.integrity.report import (
    CheckReport,
    Finding,
    NotApplicable,
    Unchecked,
    overall,
    read_judge_agreement,
    read_verdicts,
)
from ptbench.integrity.runner import default_cache_dirs, run_checks

__all__ = [
    "CheckReport",
    "Finding",
    "NotApplicable",
    "Unchecked",
    "default_cache_dirs",
    "overall",
    "read_judge_agreement",
    "read_verdicts",
    "run_checks",
]
