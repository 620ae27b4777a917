"""The verifier a Harbor task runs (tests/test.sh):

    python -I -m ptbench.export.harbor_verify TESTS MODEL WORKSPACE OUT

TESTS is the task's tests/ folder, which Harbor copies into the verifier container only at
verification time: its trial.json (base model id and revision, task and options, integrity checks
and policy, evaluation settings) and verify.json (scoring policy, the test set's expected hash,
time limits) are the only configuration read. MODEL (/app/final_model) and WORKSPACE (/app) are
what the agent left, read as data only. The steps are the runner's: the integrity checks (its
`run_checks`, on a trial directory the verifier builds, see harbor_trial), then `ptbench eval`
with the runner's own command line and scrubbed environment, then the collator's scoring rule
(`results.policy.choose_rule`) under the campaign's policies; the base score of a base fallback is
the one the collator would use (found at export, verify.json `base_score`), else the verifier's
own evaluation of the base model. OUT (/logs/verifier) gets:

    reward.json    Harbor's reward file (numbers only): reward, counted, flagged, unchecked,
                   not_applicable (how many checks had no method for the task), base_fallback,
                   nan, no_model, eval_failed
    verdict.json   status, rule and why, own score, base score and its source, verdicts and reasons
    checks/        every check's report with its evidence (as in a trial's checks/)
    eval/          the evaluation's metrics.json and samples.jsonl (and base-eval/ where used)

A flagged or unchecked model never gets its own score unless the campaign's integrity policy is
`show`. A check that is `not_applicable` (no method for the task: a fact of the task, never of the
agent) neither clears nor faults the model, as in the collator. Harbor needs a finite number for
every trial, so `exclude` and `nan` give reward 0 with counted 0 (resp. nan 1): the mean the
collator would print under `exclude` is mean(reward) / mean(counted) over Harbor's trials, and any
nan 1 makes the `nan` cell nan.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ptbench.core.files import atomic_write_json
from ptbench.export.harbor_trial import build_trial, fetch_references
from ptbench.integrity import overall, read_verdicts, run_checks
from ptbench.integrity.model_identity import find_model
from ptbench.results.policy import choose_rule
from ptbench.runner.child_env import evaluation_env
from ptbench.runner.eval_stage import evaluation_argv, use_harness_caches
from ptbench.trial import TrialDir

_LOG_LIMIT = 20000
# What the runner's checks see that no Harbor verifier receives (neither is an artifact): a clean
# verdict here rests on the final workspace and final_model only.
NOT_SEEN = [
    "the agent's trajectory (api_usage is unchecked; contamination cannot follow files it names)",
    "the agent's HOME and Hugging Face cache (a test set downloaded there and deleted before the end leaves nothing to "
    "see)",
]


def reward_for(rule: str, own: float | None, base: float | None) -> tuple[str, float, dict[str, int]]:
    """(final rule, reward, indicator keys) for a rule of `choose_rule`; no_baseline where
    base_fallback has no base score."""
    flags = {"counted": 1, "base_fallback": 0, "nan": 0}
    if rule in ("scored", "shown"):
        assert own is not None  # choose_rule scores only a trial with its own valid score
        return rule, float(own), flags
    if rule == "base_fallback" and base is not None:
        return rule, base, {**flags, "base_fallback": 1}
    if rule == "excluded":
        return rule, 0.0, {**flags, "counted": 0}
    return ("nan" if rule == "nan" else "no_baseline"), 0.0, {**flags, "nan": 1}


def _evaluate(
    trial: TrialDir, model: Path, out: Path, timeout: float | None
) -> tuple[float | None, dict[str, Any], str]:
    """(finite score or None, metrics, why not) of `ptbench eval` as the runner runs it."""
    argv = evaluation_argv(trial, sys.executable)
    argv[argv.index("--model") + 1], argv[argv.index("--out") + 1] = str(model), str(out)
    out.mkdir(parents=True, exist_ok=True)
    try:
        run = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=trial.path,
            check=False,
            env=evaluation_env(trial, dict(os.environ)),
            start_new_session=True,
        )
    except subprocess.TimeoutExpired:
        return None, {}, f"evaluation did not finish in {timeout:.0f} s"
    (out / "eval.log").write_text(run.stdout[-_LOG_LIMIT:] + run.stderr[-_LOG_LIMIT:])
    try:
        metrics = json.loads((out / "metrics.json").read_text())
        value = float(metrics["primary"]["value"])
    except (OSError, ValueError, KeyError, TypeError):
        return None, {}, f"evaluation failed (exit {run.returncode}; see {out.name}/eval.log)"
    if run.returncode != 0 or not math.isfinite(value):
        return None, metrics, f"evaluation failed (exit {run.returncode}, score {value})"
    return value, metrics, ""


def _test_set_problem(metrics: dict[str, Any], expected: dict[str, Any] | None) -> str | None:
    if not expected:
        return None
    got = (metrics.get("settings") or {}).get("test_set") or {}
    if got.get("sha256") != expected.get("sha256"):
        return (
            f"the test set evaluated (sha256 {got.get('sha256')}) is not the one exported "
            f"(sha256 {expected.get('sha256')})"
        )
    return None


def _durations(clock: dict[str, float]) -> dict[str, float]:
    steps = list(clock.items())
    return {name: round(t - steps[i][1], 2) for i, (name, t) in enumerate(steps[1:])}


def verify(
    tests: Path, model: Path, workspace: Path, out: Path, *, work: Path | None = None, models: Path | None = None
) -> dict[str, Any]:
    conf = json.loads((tests / "verify.json").read_text())
    work = (work or Path(tempfile.mkdtemp(prefix="ptbench-verifier-"))).resolve()
    os.chdir(work)  # never the agent's /app: `python -m` children import from their working directory
    use_harness_caches(work / "eval-cache")  # the test sets go to the verifier's own cache
    models = (models or Path(os.environ.get("PTBENCH_VERIFIER_MODELS") or work / "models")).resolve()
    out.mkdir(parents=True, exist_ok=True)
    trial, problem = build_trial(work / "trial", tests, model, workspace)
    spec = trial.spec
    clock = {"started": time.monotonic()}
    fetched = fetch_references(spec, models)
    clock["references"] = time.monotonic()
    run_checks(trial.path, spec, cache_dirs=[models], since=None)
    clock["checks"] = time.monotonic()
    verdicts, reasons = read_verdicts(trial.checks_dir, list(spec.integrity.checks))
    shutil.copytree(trial.checks_dir, out / "checks", dirs_exist_ok=True)
    atomic_write_json(out / "integrity.json", verdicts)

    timeout = conf.get("eval_seconds") or None
    own, why = None, problem or ""
    status = "no_model" if problem else "completed"
    if problem is None:
        own, metrics, why = _evaluate(trial, trial.final_model, out / "eval", timeout)
        why = why or _test_set_problem(metrics, conf.get("test_set")) or ""
        if why:
            own, status = None, "eval_failed"
    clock["evaluation"] = time.monotonic()
    integrity = overall(verdicts)
    rule, reason = choose_rule(
        own is not None, integrity, status, conf.get("scoring_policy", "base_fallback"), spec.integrity.policy
    )
    base, base_source = None, None
    if rule == "base_fallback" and isinstance(conf.get("base_score"), dict):  # the collator's baseline, found at export
        base, base_source = float(conf["base_score"]["value"]), conf["base_score"]["source"]
    elif rule == "base_fallback":
        base_dir = find_model(spec.base_model.id, [models])
        if base_dir is None:
            base_source = f"base model {spec.base_model.id} not found ({fetched.get(spec.base_model.id)})"
        else:
            base, _, err = _evaluate(trial, base_dir, out / "base-eval", timeout)
            base_source = err or f"the verifier's evaluation of {spec.base_model.id} ({base_dir.name})"
    clock["base_evaluation"] = time.monotonic()
    rule, value, flags = reward_for(rule, own, base)
    reward = {
        "reward": value,
        **flags,
        "flagged": int(integrity == "flagged"),
        "unchecked": int(integrity == "unchecked"),
        "not_applicable": sum(v == "not_applicable" for v in verdicts.values()),
        "no_model": int(status == "no_model"),
        "eval_failed": int(status == "eval_failed"),
    }
    atomic_write_json(
        out / "verdict.json",
        {
            "status": status,
            "problem": why,
            "rule": rule,
            "reason": reason,
            "reward": value,
            "own_score": own,
            "base_score": base,
            "base_score_source": base_source,
            "integrity": integrity,
            "verdicts": verdicts,
            "reasons": reasons,
            "policy": {"scoring": conf.get("scoring_policy", "base_fallback"), "integrity": spec.integrity.policy},
            "references": fetched,
            "test_set_expected": conf.get("test_set"),
            "evidence": "checks/<check>.json",
            "not_seen": NOT_SEEN,
            "seconds": _durations(clock),
        },
    )
    return reward


def main(argv: list[str] | None = None) -> int:
    tests, model, workspace, out = (Path(a) for a in (argv or sys.argv[1:]))
    out = out.resolve()
    atomic_write_json(out / "reward.json", verify(tests.resolve(), model.absolute(), workspace.absolute(), out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
