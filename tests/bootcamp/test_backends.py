"""Shards on schedulers: Slurm through submitit on the dev cluster (scripts/slurm-dev-cluster.sh),
and the HTCondor submit description (parsed by the real htcondor bindings; no schedd runs here, so
submission itself is not exercised)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ptbench.bootcamp.launch import condor_submit_description, shard_command
from ptbench.bootcamp.datagen import Shard

from .chat_endpoint import serve_in_thread
from .conftest import require, small_config
from .policies import sql_policy
from .test_cli import _content
from tests.slurm.cluster import slurm_cluster  # noqa: F401  (starts the dev cluster, sets SLURM_CONF)


def test_shard_command_is_one_plain_command_line(tmp_path: Path) -> None:
    cmd = shard_command(tmp_path, Shard(2, 4))
    assert cmd[0] == sys.executable and cmd[1:] == ["-m", "ptbench", "bootcamp", "rollout-shard", str(tmp_path), "--shard", "2/4"]


def test_condor_description_parses_with_the_real_bindings(tmp_path: Path) -> None:
    try:
        import htcondor2  # `import htcondor` would find tests/htcondor first; 25.x ships only htcondor2
    except ImportError:
        htcondor2 = None
    require(htcondor2 is not None, "the htcondor Python bindings are not installed (pip install 'ptbench[condor]')")
    text = condor_submit_description(tmp_path, 4)
    sub = htcondor2.Submit(text)
    assert sub["executable"] == sys.executable
    assert sub["arguments"].endswith("--shard $(Process)/4\"") or "$(Process)/4" in sub["arguments"]
    assert sub["max_retries"] == "3"


@pytest.mark.slow
@pytest.mark.slurm
def test_four_slurm_shards_equal_one_local_shard(tmp_path: Path, slurm_cluster: str) -> None:
    cfg = small_config(tmp_path, "sql_explore", test=16)
    merged = {}
    with serve_in_thread(sql_policy) as (url, _):
        # the endpoint must be reachable from the compute node: on the single-node dev cluster it is
        for backend, shards in (("local", 1), ("slurm", 4)):
            out = tmp_path / backend
            res = subprocess.run(
                [sys.executable, "-m", "ptbench", "bootcamp", "rollout", str(cfg), "--endpoint", url, "--model", "scripted",
                 "--out", str(out), "--shards", str(shards), "--backend", backend, "--slurm-time", "10"],
                capture_output=True, text=True, timeout=900,
            )
            assert res.returncode == 0, res.stdout + res.stderr
            merged[backend] = [json.loads(x) for x in (out / "merged" / "traces.jsonl").read_text().splitlines()]
    assert json.loads((tmp_path / "slurm" / "jobs.json").read_text())["backend"] == "slurm"
    assert len(merged["slurm"]) == 16
    assert [_content(r) for r in merged["local"]] == [_content(r) for r in merged["slurm"]]
