"""Shards on schedulers: Slurm through submitit on the dev cluster (scripts/slurm-dev-cluster.sh),
and the HTCondor submit description (parsed by the real htcondor bindings; no schedd runs here, so
submission itself is not exercised)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ptbench.bootcamp.data.datagen import Shard
from ptbench.rollout_launcher.htcondor import shards_description as condor_submit_description
from ptbench.rollout_launcher.units import shard_command
from tests.backends.slurm.cluster import slurm_cluster  # noqa: F401  (starts the dev cluster, sets SLURM_CONF)
from tests.bootcamp.chat_endpoint import serve_in_thread
from tests.bootcamp.conftest import require, small_config
from tests.bootcamp.policies import sql_policy
from tests.bootcamp.test_bootcamp_cli import _content


def test_shard_command_is_one_plain_command_line(tmp_path: Path) -> None:
    cmd = shard_command(tmp_path, Shard(2, 4))
    assert cmd[0] == sys.executable and cmd[1:] == [
        "-m",
        "ptbench",
        "bootcamp",
        "rollout-shard",
        str(tmp_path),
        "--shard",
        "2/4",
    ]


def test_condor_description_parses_with_the_real_bindings(tmp_path: Path) -> None:
    try:
        import htcondor2  # 25.x ships only htcondor2
    except ImportError:
        htcondor2 = None
    require(htcondor2 is not None, "the htcondor Python bindings are not installed (pip install 'ptbench[condor]')")
    text = condor_submit_description(tmp_path, 4)
    sub = htcondor2.Submit(text)
    assert sub["executable"] == sys.executable
    assert sub["arguments"].endswith('--shard $(Process)/4"') or "$(Process)/4" in sub["arguments"]
    assert sub["max_retries"] == "3"


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.slurm
def test_four_slurm_shards_equal_one_local_shard(
    tmp_path: Path,
    slurm_cluster: str,  # noqa: F811  (the fixture imported above: pytest passes it by name)
) -> None:
    cfg = small_config(tmp_path, "sql_explore", test=16)
    merged = {}
    with serve_in_thread(sql_policy) as (url, _):
        # the endpoint must be reachable from the compute node: on the single-node dev cluster it is
        for backend, shards in (("local", 1), ("slurm", 4)):
            out = tmp_path / backend
            # the same backend.options a campaign's trials take (setup lines, sbatch extras, account)
            options = {
                "account": "ptbench-test",
                "setup": [f"touch {out}/setup-ran-$SLURM_ARRAY_TASK_ID"],
                "sbatch": {"comment": "shards"},
            }
            backend_file = tmp_path / f"{backend}-backend.yaml"
            backend_file.write_text(
                json.dumps({"backend": {"name": backend, "options": options if backend == "slurm" else {}}})
            )
            res = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "ptbench",
                    "bootcamp",
                    "rollout",
                    str(cfg),
                    "--endpoint",
                    url,
                    "--model",
                    "scripted",
                    "--out",
                    str(out),
                    "--shards",
                    str(shards),
                    "--backend-config",
                    str(backend_file),
                    "--slurm-time",
                    "10",
                ],
                capture_output=True,
                text=True,
                timeout=900,
            )
            assert res.returncode == 0, res.stdout + res.stderr
            merged[backend] = [json.loads(x) for x in (out / "merged" / "traces.jsonl").read_text().splitlines()]
    assert json.loads((tmp_path / "slurm" / "jobs.json").read_text())["backend"] == "slurm"
    assert sorted(p.name for p in (tmp_path / "slurm").glob("setup-ran-*")) == [f"setup-ran-{i}" for i in range(4)]
    # `ptbench status` shows the shards like trials: one row each, state and the Slurm job
    jobs = json.loads((tmp_path / "slurm" / "jobs.json").read_text())["units"]
    shown = subprocess.run(
        [sys.executable, "-m", "ptbench", "status", str(tmp_path / "slurm")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert shown.returncode == 0, shown.stderr
    for i in range(4):
        tag = f"shard-{i:05d}-of-00004"
        row = next(line for line in shown.stdout.splitlines() if tag in line)
        assert "completed" in row and jobs[tag] in row and "episodes" in row, row
    assert len(merged["slurm"]) == 16
    assert [_content(r) for r in merged["local"]] == [_content(r) for r in merged["slurm"]]


SHARDS_GOLDEN = Path(__file__).resolve().parents[1] / "backends" / "slurm" / "golden" / "shards.sbatch"


def test_shard_array_takes_the_trials_slurm_options(tmp_path: Path) -> None:
    """The sbatch script of a shard array, as text: account, qos, gres, setup and sbatch extras from
    the same `backend.options` (and the same SlurmBackend code) as a campaign's trials."""
    cfg = small_config(tmp_path, "arithmetic", test=8)
    campaign = tmp_path / "campaign.yaml"
    campaign.write_text(
        json.dumps(
            {
                "name": "x",
                "backend": {
                    "name": "slurm",
                    "options": {
                        "partition": "gpu",
                        "account": "proj42",
                        "qos": "normal",
                        "gres": "gpu:h100:1",
                        "cpus_per_task": 8,
                        "mem_gb": 32,
                        "setup": ["module load cuda/12.4"],
                        "sbatch": {"mail-type": "END"},
                    },
                },
            }
        )
    )
    out = tmp_path / "rollout"
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "ptbench",
            "bootcamp",
            "rollout",
            str(cfg),
            "--endpoint",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "--out",
            str(out),
            "--shards",
            "3",
            "--backend-config",
            str(campaign),
            "--render",
            "--slurm-time",
            "30",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    text = (out / "submit" / "slurm.sh").read_text().replace(str(tmp_path), "@TMP@").replace(sys.executable, "@PYTHON@")
    if os.environ.get("PTBENCH_UPDATE_GOLDEN"):
        SHARDS_GOLDEN.write_text(text)
    assert text == SHARDS_GOLDEN.read_text(), (
        f"rendered script differs from {SHARDS_GOLDEN} (PTBENCH_UPDATE_GOLDEN=1 rewrites it after review)"
    )
    for line in (
        "#SBATCH --account=proj42",
        "#SBATCH --qos=normal",
        "#SBATCH --gres=gpu:h100:1",
        "#SBATCH --partition=gpu",
        "#SBATCH --array=0-2%3",
        "#SBATCH --time=30",
        "#SBATCH --mail-type=END",
        "module load cuda/12.4",
    ):
        assert line in text, line


def test_bad_shard_backend_option_is_one_line(tmp_path: Path) -> None:
    cfg = small_config(tmp_path, "arithmetic", test=8)
    bad = tmp_path / "b.yaml"
    bad.write_text(json.dumps({"backend": {"name": "slurm", "options": {"acount": "x"}}}))
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "ptbench",
            "bootcamp",
            "rollout",
            str(cfg),
            "--endpoint",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "--out",
            str(tmp_path / "o"),
            "--backend-config",
            str(bad),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "backend.options.acount" in res.stderr and not (tmp_path / "o").exists()
