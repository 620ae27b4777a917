"""Trial directories for the integrity checks: a real trial.json (TrialSpec) and the folders the
runner's stages leave, filled by each test with what a hostile or honest agent would leave."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ptbench.spec.campaign import AgentRef, BaseModelRef, Budget, Integrity, TaskRef
from ptbench.trial import TrialDir, TrialSpec
from tests.support import scripted_provider  # noqa: F401  (re-exported fixture)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tasks"


def make_trial(
    root: Path,
    *,
    task: str = "gsm8k",
    options: dict | None = None,
    base: str = "/models/base",
    integrity: dict | None = None,
    seed: int = 0,
    agent: str = "reference",
) -> TrialDir:
    if options is None:
        options = {"data_path": str(FIXTURES / task)} if (FIXTURES / task).exists() else {}
    spec = TrialSpec(
        campaign="c",
        trial_id="t",
        agent=AgentRef(name=agent),
        base_model=BaseModelRef(id="tiny/base", path=base),
        task=TaskRef(name=task, options=options),
        seed=seed,
        budget=Budget(hours=1, gpus=0),
        integrity=Integrity(**(integrity or {})),
    )
    path = root / "t"
    for d in ("workspace", "home", "agent", "checks", "eval"):
        (path / d).mkdir(parents=True, exist_ok=True)
    (path / "trial.json").write_text(spec.model_dump_json(indent=2))
    return TrialDir(path)


def write_trajectory(trial: TrialDir, commands: list[str]) -> None:
    steps = [
        {"index": i, "kind": "tool_call", "tool_call": {"name": "Bash", "arguments": {"command": c}, "status": "ok"}}
        for i, c in enumerate(commands)
    ]
    (trial.agent_dir / "trajectory.json").write_text(json.dumps({"schema_version": 1, "steps": steps}))


@pytest.fixture
def trial_factory(tmp_path: Path):
    def make(**kw) -> TrialDir:
        return make_trial(tmp_path, **kw)

    return make


def train_tiny_models(
    tiny_model: Path, root: Path, runs: dict[str, tuple[Path, int, int]], timeout: float = 3600
) -> dict[str, Path]:
    """Real TRL fine-tunes (the reference recipe) of the tiny model, `runs` = name: (train file, steps,
    batch size), trained in one fresh process (the recipe sets torch's global determinism flags; they
    must not leak into pytest's process). Returns name: model folder under root."""
    argvs = [
        ["--base-model", str(tiny_model), "--train-file", str(data), "--output", str(root / name)]
        + ["--max-steps", str(steps), "--batch-size", str(batch), "--seed", "0"]
        for name, (data, steps, batch) in runs.items()
    ]
    code = (
        "import sys, json\nfrom ptbench.training.reference_sft import main\nfor a in json.loads(sys.argv[1]): main(a)"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, json.dumps(argvs)], capture_output=True, text=True, timeout=timeout, env=os.environ
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return {name: root / name for name in runs}
