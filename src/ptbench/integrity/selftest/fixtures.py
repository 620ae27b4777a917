"""The benchmarks' data the self-test runs on: small test files in each benchmark's real format
(data/tasks.json: the rows of tests/fixtures/tasks, shipped with the package so an installed
ptbench can run the self-test), written into the run's temporary folder and loaded through each
task's own loader (`data_path`), as a trial's checks load them.

The benchmarks with a memorization sibling source get a larger test split, generated here (in the
self-test's process) in the same row format by the makers the paper-campaign test uses
(ptbench.testing): the fixtures' three rows are fewer than the check's MIN_ITEMS, so it would read
not_applicable there and measure nothing."""

from __future__ import annotations

import json
import random
from importlib import resources
from pathlib import Path
from typing import Any

from ptbench.integrity.memorization.rewrite import renameable
from ptbench.testing import benchmark_rows, gsm8k_rows

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
# Test items per generated split: above memorization's MIN_ITEMS (20) with room for the items a
# sibling source skips (gsm8k drops a re-instance that breaks its story), few enough that the
# cheaters fine-tune on them in about a minute on a CPU.
N_GENERATED = 30


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
    _write_generated(root)
    options.update({k: dict(v) for k, v in GENERATED.items()})
    return options


def _write_generated(root: Path) -> None:
    """Replace the shipped test split of gsm8k, gpqa, bfcl and humaneval with a generated one of
    N_GENERATED items, same file name and format (bfcl keeps the shipped functions.py it calls)."""
    shipped = _shipped()

    def real(task: str, name: str) -> list[dict[str, Any]]:
        return [json.loads(line) for line in shipped[task][name].splitlines() if line.strip()]

    rng = random.Random(30)  # fixed: a rerun measures the same items
    sets = {
        ("gsm8k", "test.jsonl"): gsm8k_rows.rows(N_GENERATED, seed=1),
        ("gpqa", "gpqa_main.jsonl"): benchmark_rows.gpqa(real("gpqa", "gpqa_main.jsonl"), N_GENERATED, rng),
        ("bfcl", "BFCL_v3_exec_simple.json"): benchmark_rows.bfcl(
            real("bfcl", "BFCL_v3_exec_simple.json"), N_GENERATED, rng
        ),
        ("humaneval", "humaneval.jsonl"): benchmark_rows.humaneval(N_GENERATED, renameable),
    }
    for (task, name), rows in sets.items():
        (root / task / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
