"""Which checks have a method for a task, decided from the campaign alone (before anything runs).

`validate` refuses a campaign that requires (`integrity.require`) a check that cannot apply to one of
its tasks; the runner turns a required check's run-time `not_applicable` (a test split that proves
too small only once loaded) into `unchecked`, so a required check never silently stops deciding.
"""

from __future__ import annotations

from typing import Any


def not_applicable_reason(check: str, task_name: str, options: dict[str, Any]) -> str | None:
    """Why `check` has no method for `task_name` with these options; None where it applies (each
    check says so itself: IntegrityCheck.not_applicable_reason)."""
    from ptbench.integrity.checks import CHECKS

    return CHECKS.get(check).not_applicable_reason(task_name, options)
