"""Every `scripts/bench_*.py` runs at its `--tiny` size, so a benchmark cannot rot unnoticed.

Each script is run as a user runs it (a subprocess, from the repository root) and must exit 0 and
print its figures. Nothing here asserts a speed: the figures of a tiny run mean little, and speeds
belong to the scripts' own full-size runs. The scripts that submit to Slurm need the dev cluster.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.backends.slurm.cluster import slurm_cluster  # noqa: F401  (the session fixture)

pytestmark = [pytest.mark.slow, pytest.mark.integration]

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p.name for p in (REPO / "scripts").glob("bench_*.py"))

# script -> (a line of its output that carries its figures, marks)
EXPECTED: dict[str, tuple[str, tuple[pytest.MarkDecorator, ...]]] = {
    "bench_battery.py": (r"cores_busy_pct", ()),
    "bench_bootcamp_export.py": (r"export-verl, 3 bootcamps, \d+ rows: [\d.]+ s cold", ()),
    "bench_bootcamp_throughput.py": (r'"fraction_of_ideal": [\d.]+', ()),
    "bench_bootcamp_turn_inprocess.py": (r'"in_process_ms_per_turn": [\d.]+', ()),
    "bench_collate.py": (r"`ptbench collate`, end to end: +median [\d.]+ s wall", ()),
    "bench_contamination.py": (r"planted \d+ items, found \d+", ()),
    "bench_contamination_lines.py": (r"question lines on : \d+ keys, .* found 0", ()),
    "bench_datagen_stream.py": (r'"cases_per_s": \d+', ()),
    "bench_deadline.py": (r"deadline -> last process gone, median [\d.]+ s", ()),
    "bench_eval_overhead.py": (r'"ratio_median": [\d.]+', (pytest.mark.slow,)),
    "bench_gateway.py": (r"added [\d.-]+ ms", ()),
    "bench_generation.py": (r'battery \{"n_per_level": 1, "cases_per_s": \{.*"all_levels": [\d.]+', ()),
    "bench_journal.py": (r'"overhead_pct": [\d.-]+', ()),
    "bench_htcondor_replicas.py": (r'"exit_after_last_shard_s_median": [\d.]+', ()),
    "bench_memorization.py": (
        r"false positives: \d+/\d+ honest runs; detected: \d+/\d+ cheaters\n.*with a warm cache [\d.]+ s"
        r"(.|\n)*humaneval, short answers +[\d,]+ +[\d.]+ +\d+% +\d+% +[\d.]+%",
        (),
    ),
    "bench_memorization_gsm8k.py": (r"false positives: \d+/\d+ honest runs; detection at 100%: \d+/\d+", ()),
    "bench_memorization_mcq.py": (
        r"bfcl: false positives: \d+/\d+ honest runs\n(.|\n)*"
        r"bfcl: detected at 100% of the test items: \d+/\d+ cheaters",
        (),
    ),
    "bench_memorization_power.py": (r"  40       40 normal +[\d./ ]+ +0/50", ()),
    "bench_model_identity.py": (r"model identity: \w+ in [\d.]+ s", ()),
    "bench_node_cache.py": (r'"monitor_sample_seconds": [\d.]+', ()),
    "bench_plan.py": (r"plan \(create 16 trial dirs \+ trial.json\): [\d.]+ s", ()),
    "bench_report.py": (r"`ptbench report`, end to end .*: [\d.]+ s wall", ()),
    "bench_runner_overhead.py": (r"runner start -> agent start over 1 runs: median [\d.]+ s", ()),
    "bench_sandbox_humaneval.py": (r'"ptbench_checked_s": [\d.]+', ()),
    "bench_slurm_status.py": (r'"scheduler_calls": \d+', (pytest.mark.slurm,)),
    "bench_slurm_submit.py": (r'"array_tasks_in_squeue": [1-9]\d*', (pytest.mark.slurm,)),
    "bench_tool_replicas.py": (r"SIGKILL: \d+ episodes replayed", ()),
}


def test_every_bench_script_is_run_here() -> None:
    assert sorted(EXPECTED) == SCRIPTS  # a new benchmark gets its tiny run here


@pytest.mark.parametrize(
    "script", [pytest.param(name, marks=EXPECTED[name][1]) for name in SCRIPTS if name in EXPECTED]
)
def test_bench_script_runs_tiny_and_prints_its_figures(script: str, request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("slurm"):
        request.getfixturevalue("slurm_cluster")  # SLURM_CONF for the script (fails in CI, skips elsewhere)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")]))}
    # its own session: a script that runs past the limit is stopped with every process it started
    proc = subprocess.Popen(
        [sys.executable, f"scripts/{script}", "--tiny"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
    run = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    assert run.returncode == 0, f"{script} --tiny exited {run.returncode}:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    assert re.search(EXPECTED[script][0], run.stdout), run.stdout[-3000:]
