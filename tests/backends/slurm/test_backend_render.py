"""The sbatch script a campaign becomes, as text (golden file), and the backend's pure parts.
No cluster needed: `ptbench render` never submits."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import yaml

from ptbench.backends.slurm.backend import SlurmBackend, default_gres, parse_options
from ptbench.backends.slurm.cmd import one_line, trial_state
from ptbench.core.errors import OptionProblem
from ptbench.spec.campaign import Budget
from tests.conftest import ptbench

GOLDEN = Path(__file__).parent / "golden" / "array.sbatch"


def _campaign(tmp_path: Path, **options) -> Path:
    data = {
        "name": "golden",
        "agents": ["base-model", "reference"],
        "base_models": [{"id": "Qwen/Qwen3-1.7B-Base", "revision": "abc123"}],
        "tasks": ["arithmetic"],
        "seeds": [0, 1, 2],
        "budget": {"hours": 10, "gpus": 1, "gpu_type": "H100", "eval_minutes": 60, "margin_minutes": 10},
        "backend": {
            "name": "slurm",
            "options": {
                "partition": "gpu",
                "account": "proj42",
                "qos": "normal",
                "constraint": "h100&ib",
                "cpus_per_task": 16,
                "mem_gb": 120,
                "setup": ["module load cuda/12.4", "source ~/venvs/ptbench/bin/activate"],
                "sbatch": {"mail-type": "END,FAIL", "exclude": "node07"},
                **options,
            },
        },
        "results_dir": str(tmp_path / "results"),
        "parallelism": 4,
    }
    path = tmp_path / "golden.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_render_writes_the_exact_sbatch_script(tmp_path: Path) -> None:
    res = ptbench("render", str(_campaign(tmp_path)))
    assert res.returncode == 0, res.stderr
    script = Path(res.stdout.strip())
    assert script == tmp_path / "results" / "golden" / "submit" / "slurm.sh"
    text = script.read_text().replace(str(tmp_path), "@TMP@").replace(sys.executable, "@PYTHON@")
    if os.environ.get("PTBENCH_UPDATE_GOLDEN"):
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text(), (
        f"rendered script differs from {GOLDEN} (PTBENCH_UPDATE_GOLDEN=1 rewrites it after review)"
    )
    # --time = 10 h budget + 30 s grace + 60 min eval + 10 min margin, in whole minutes
    assert (
        "#SBATCH --time=671\n" in text and "#SBATCH --array=0-5%4\n" in text and "#SBATCH --gres=gpu:h100:1\n" in text
    )
    trials = (script.parent / "slurm.trials.txt").read_text().splitlines()
    assert len(trials) == 6 and trials[0].endswith("/results/golden/base-model__qwen3-1.7b-base__arithmetic__s0")


def test_unknown_option_is_one_clear_line(tmp_path: Path) -> None:
    res = ptbench("render", str(_campaign(tmp_path, partitoin="gpu")))
    assert res.returncode == 2
    assert (
        res.stderr.strip().splitlines() == [res.stderr.strip().splitlines()[0]]
        and "backend.options.partitoin: 'partitoin' is not a Slurm option (did you mean 'partition'?" in res.stderr
    )
    assert "Traceback" not in res.stderr


def test_gres_from_the_budget() -> None:
    assert default_gres(Budget(hours=1, gpus=2, gpu_type="H100"), parse_options({})) == "gpu:h100:2"
    assert default_gres(Budget(hours=1, gpus=1), parse_options({})) == "gpu:1"
    assert default_gres(Budget(hours=1, gpus=0), parse_options({})) is None
    assert (
        default_gres(Budget(hours=1, gpus=4, gpu_type="H100"), parse_options({"gpu_type": "nvidia_h100_80gb_hbm3"}))
        == "gpu:nvidia_h100_80gb_hbm3:4"
    )
    assert default_gres(Budget(hours=1, gpus=1, gpu_type="H100"), parse_options({"gres": ""})) is None
    with pytest.raises(OptionProblem, match="greater than or equal to 1") as bad:
        parse_options({"cpus_per_task": 0})
    assert bad.value.key == "cpus_per_task"  # validate puts the campaign's file:line and key in front


def test_slurm_states_map_to_trial_states() -> None:
    assert [
        trial_state(s)
        for s in ("PENDING", "REQUEUED", "RUNNING", "COMPLETING", "SUSPENDED", "COMPLETED", "TIMEOUT", "CANCELLED by 0")
    ] == ["queued", "queued", "running", "running", "suspended", None, None, None]


def test_sbatch_errors_become_one_line() -> None:
    assert (
        one_line(
            "sbatch: error: invalid partition specified: nope\n"
            "sbatch: error: Batch job submission failed: Invalid partition name specified"
        )
        == "invalid partition specified: nope"
    )
    assert one_line(
        "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)"
    ) == ("Batch job submission failed: Unable to contact slurm controller (connect failure)")


def test_time_and_signal_follow_the_budget(tmp_path: Path) -> None:
    from ptbench.spec import load_campaign

    c = load_campaign(_campaign(tmp_path, signal_seconds=120))
    params = SlurmBackend(**c.backend.options).sbatch_parameters(c)
    assert params["time"] == c.budget.scheduler_minutes == 671
    assert params["signal_delay_s"] == 120 and params["additional_parameters"]["requeue"] is True
