"""The benchmarks' data the self-test runs on: small test files in each benchmark's real format
(data/tasks.json: the rows of tests/fixtures/tasks, shipped with the package so an installed
ptbench can run the self-test), written into the run's temporary folder and loaded through each
task's own loader (`data_path`), as a trial's checks load them."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

# arithmetic is generated (no files); 40 test items: enough for the memorization check's power
# (siblings.MIN_ITEMS per set), few enough to fine-tune on in seconds.
GENERATED = {"arithmetic": {"digits": 2, "n_test": 40}}
# Options beyond data_path that the shipped files need (file names are relative to the task's folder):
# the judged tasks' subsets are lists of ids in a file, and arena's reference answers are one model's.
FILE_OPTIONS = {
    "arena_hard_writing": {"question_uids": "uids.txt"},
    "healthbench_easy": {"subset_ids": "prompt_ids.txt"},
}
OTHER_OPTIONS = {"arena_hard_writing": {"reference_model": "gemini-2.0-flash-001"}}


def _shipped() -> dict[str, dict[str, str]]:
    data: dict[str, dict[str, str]] = json.loads(
        resources.files("ptbench.integrity.selftest").joinpath("data", "tasks.json").read_text()
    )
    return data


def benchmarks() -> list[str]:
    """Every benchmark the self-test covers: those with shipped data, then the generated ones."""
    return sorted(_shipped()) + sorted(GENERATED)


def write_task_data(root: Path) -> dict[str, dict[str, Any]]:
    """Write every benchmark's files under root/<task>/; {task: its options (data_path)}."""
    options: dict[str, dict[str, Any]] = {}
    for task, files in _shipped().items():
        for rel, text in files.items():
            path = root / task / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        (root / task).mkdir(parents=True, exist_ok=True)
        options[task] = {
            "data_path": str(root / task),
            **{k: str(root / task / v) for k, v in FILE_OPTIONS.get(task, {}).items()},
            **OTHER_OPTIONS.get(task, {}),
        }
    options.update({k: dict(v) for k, v in GENERATED.items()})
    return options
