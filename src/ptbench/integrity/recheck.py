"""`ptbench check TRIAL_DIR`: run the integrity checks of a finished (or stopped) trial again.

The previous checks/ is moved aside to checks.untrusted/<stamp>/ (never deleted); result.json is
left as it was recorded, so the verdicts it carries stay those of the run.
"""

from __future__ import annotations

from pathlib import Path

from ptbench.core.errors import UserError
from ptbench.integrity.report import SUMMARY_FILE, read_verdicts
from ptbench.integrity.runner import run_checks
from ptbench.trial import TrialDir


def recheck(trial_dir: str, *, checks: list[str] | None = None) -> tuple[dict[str, str], dict[str, str], Path]:
    trial = TrialDir(trial_dir)
    if not trial.path.is_dir():
        raise UserError(f"{trial_dir}: no such trial directory")
    spec = trial.spec
    if checks:
        from ptbench.spec.campaign import Integrity

        try:
            spec = spec.model_copy(update={"integrity": Integrity(**{**spec.integrity.model_dump(), "checks": checks})})
        except ValueError as exc:
            raise UserError(f"--only: {exc.errors()[0]['msg'] if hasattr(exc, 'errors') else exc}") from None
    with trial.try_lock() as held:
        if not held:
            raise UserError(f"{trial.path}: a runner is working on this trial; check it when it has finished")
        run_checks(trial.path, spec)
    verdicts, reasons = read_verdicts(trial.checks_dir, list(spec.integrity.checks))
    return verdicts, reasons, trial.checks_dir / SUMMARY_FILE
