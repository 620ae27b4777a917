"""Tool-server replicas on the dev Slurm cluster (scripts/slurm-dev-cluster.sh): `rollout --backend
slurm --tool-replicas 3` submits the replicas as one job array beside the shard's; one array task is
`scancel`led mid-rollout. Every episode is recorded exactly once, the ones it held are replayed on
the survivors, and when the rollout ends no replica job or process is left."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from ptbench.backends.slurm import cmd as slurm_cmd
from ptbench.bootcamp.serving.replicas import read_replicas, read_token, replica_dir
from ptbench.core.files import read_jsonl
from ptbench.rollout_launcher.tool_replicas import replica_status_rows
from tests.backends.slurm.cluster import slurm_cluster  # noqa: F401  (starts the dev cluster, sets SLURM_CONF)
from tests.bootcamp.chat_endpoint import serve_in_thread
from tests.bootcamp.conftest import require
from tests.bootcamp.policies import sql_policy
from tests.rollout_launcher.test_tool_replicas import health, remote_sql_config


def _partition_shares_cpus() -> bool:
    """3 replicas and a shard on the 2-CPU dev node share CPUs (sbatch --oversubscribe), which the
    partition must allow; a cluster started by an older script is switched over at run time."""
    shown = subprocess.run(
        ["scontrol", "show", "partition", "debug"], capture_output=True, text=True, timeout=60
    ).stdout
    if "OverSubscribe=NO" in shown:
        subprocess.run(
            ["scontrol", "update", "PartitionName=debug", "OverSubscribe=YES"], capture_output=True, timeout=60
        )
        shown = subprocess.run(
            ["scontrol", "show", "partition", "debug"], capture_output=True, text=True, timeout=60
        ).stdout
    return "OverSubscribe=YES" in shown or "OverSubscribe=FORCE" in shown


def _records(out: Path) -> list[dict]:
    return [r for p in sorted((out / "shards").glob("shard-*.jsonl")) for r in read_jsonl(p)]


def _wait(check, timeout: float, what: str, proc: subprocess.Popen, log: Path):  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        if proc.poll() is not None:
            pytest.fail(f"the rollout ended (exit {proc.returncode}) before {what}: {log.read_text()[-3000:]}")
        time.sleep(0.2)
    pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}: {log.read_text()[-3000:]}")


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.slurm
@pytest.mark.usefixtures("slurm_cluster")
def test_scancelled_replica_moves_its_episodes_to_the_survivors(tmp_path: Path) -> None:
    require(
        _partition_shares_cpus(),
        "the dev cluster's partition does not allow --oversubscribe (restart it with scripts/slurm-dev-cluster.sh)",
    )
    cfg = remote_sql_config(tmp_path, test=30)
    out = tmp_path / "out"
    backend = tmp_path / "backend.yaml"
    backend.write_text(
        json.dumps(
            {
                "backend": {
                    "name": "slurm",
                    "options": {"cpus_per_task": 1, "mem_gb": 1, "sbatch": {"oversubscribe": True}},
                }
            }
        )
    )
    log = tmp_path / "rollout.log"
    # the endpoint must be reachable from the compute node: on the single-node dev cluster it is
    with serve_in_thread(sql_policy, latency_s=0.4) as (url, _), open(log, "wb") as sink:
        proc = subprocess.Popen(
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
                "1",
                "--tool-replicas",
                "3",
                "--concurrency",
                "3",
                "--backend-config",
                str(backend),
                "--slurm-time",
                "10",
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
        try:
            _wait(lambda: (out / "shards").is_dir() and len(_records(out)) >= 3, 300, "3 episodes", proc, log)
            token = read_token(out)
            announced = read_replicas(out, token)
            assert len(announced) == 3 and all(r["job_id"] and r["job_id"].count("_") == 1 for r in announced), (
                announced
            )
            assert len({r["job_id"].split("_")[0] for r in announced}) == 1  # one array
            load = {r["replica"]: health(r["url"], token)[1]["instances"] for r in announced}
            victim = next(r for r in announced if r["replica"] == max(load, key=load.get))
            killed_at = time.time()
            slurm_cmd.scancel([victim["job_id"]])
            assert proc.wait(400) == 0, log.read_text()[-3000:]
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    records = _records(out)
    ids = [r["sample_id"] for r in records]
    assert len(ids) == 30 and len(set(ids)) == 30  # every episode exactly once
    assert all(r["status"] == "ok" and r["correct"] for r in records)
    restarted = [r for r in records if r["restarts"]]
    assert load[victim["replica"]] > 0 and len(restarted) >= 1
    for r in restarted:
        assert [h["from_replica"]["job_id"] for h in r["restarts"]] == [victim["job_id"]]
        assert r["tool_replica"]["job_id"] != victim["job_id"] and r["restarts"][-1]["to_replica"] == r["tool_replica"]
    late = [r for r in records if r["started_at"] > killed_at + 1]
    assert late and all(r["tool_replica"]["job_id"] != victim["job_id"] for r in late)  # the rest ran on the survivors
    merged = [json.loads(x) for x in (out / "merged" / "traces.jsonl").read_text().splitlines()]
    assert sorted(r["sample_id"] for r in merged) == sorted(ids)
    # the replicas ended with the rollout: no array task left, no process serving them
    array = victim["job_id"].split("_")[0]
    assert all(info.state in slurm_cmd.ENDED for info in slurm_cmd.squeue([array]).values())
    states = {j: info.state for j, info in slurm_cmd.squeue([array]).items()}
    assert states[victim["job_id"]] == "CANCELLED", states
    shown = {r.trial_id: r for r in replica_status_rows(out)}  # `ptbench status OUT` rows
    assert sorted(shown) == ["tool-replica-0", "tool-replica-1", "tool-replica-2"]
    assert shown[f"tool-replica-{victim['replica']}"].detail.startswith("CANCELLED") and all(
        r.state == "ended" for r in shown.values()
    )
    assert not [
        p for p in psutil.process_iter(["cmdline"]) if str(replica_dir(out)) in " ".join(p.info["cmdline"] or [])
    ]
