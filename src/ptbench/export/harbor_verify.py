"""The verifier a Harbor task runs (tests/test.sh): `python -m ptbench.export.harbor_verify VERIFY_JSON MODEL OUT`.

It checks what the agent left (a final_model/ with files, no link out of it), evaluates it with the
same `ptbench eval` the runner uses, records the integrity verdicts (the runner's seam: "unchecked"
until the integrity checks exist, never "clean") and writes OUT/reward.json atomically:
{"reward": primary metric value, "no_model": 0|1, "eval_failed": 0|1}. Anything wrong scores 0.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ptbench.core.files import atomic_write_json


def _problem(model: Path) -> str | None:
    if not model.is_dir() or not any(model.iterdir()):
        return "no final_model/"
    for p in [model, *model.rglob("*")]:
        if p.is_symlink() and not p.resolve().is_relative_to(model.resolve()):
            return f"{p.name} links outside final_model/"
    return None


def verify(spec_file: Path, model: Path, out: Path) -> dict:
    spec = json.loads(spec_file.read_text())
    out.mkdir(parents=True, exist_ok=True)
    reward = {"reward": 0.0, "no_model": 0, "eval_failed": 0}
    atomic_write_json(out / "integrity.json", {"contamination": "unchecked", "model_identity": "unchecked", "api_usage": "unchecked"})
    if (why := _problem(model)) is not None:
        reward["no_model"] = 1
        (out / "why.txt").write_text(why + "\n")
        return reward
    argv = [sys.executable, "-m", "ptbench", "eval", spec["task"], "--model", str(model), "--out", str(out / "eval"),
            "--engine", spec.get("engine", "auto"), "--batch-size", str(spec.get("batch_size", 32)), "--task-options", json.dumps(spec.get("options", {}))]
    if spec.get("limit"):
        argv += ["--limit", str(spec["limit"])]
    try:
        run = subprocess.run(argv, capture_output=True, text=True, timeout=spec.get("eval_seconds") or None)
    except subprocess.TimeoutExpired:
        reward["eval_failed"] = 1
        return reward
    (out / "eval.log").write_text(run.stdout[-20000:] + run.stderr[-20000:])
    metrics = out / "eval" / "metrics.json"
    if run.returncode != 0 or not metrics.exists():
        reward["eval_failed"] = 1
        return reward
    value = float(json.loads(metrics.read_text())["primary"]["value"])
    reward["reward"] = value if value == value else 0.0  # NaN scores 0
    return reward


def main(argv: list[str] | None = None) -> int:
    spec_file, model, out = (Path(a) for a in (argv or sys.argv[1:]))
    atomic_write_json(out / "reward.json", verify(spec_file, model, out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
