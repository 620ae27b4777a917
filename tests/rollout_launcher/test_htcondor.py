"""Tool-server replicas on HTCondor. No schedd runs here: the submit descriptions are parsed by the
real htcondor2 bindings, submission goes to a stand-in condor_submit on PATH (the one seam that
cannot run here; it records what it was given and whether the token existed at that moment), and
the replicas themselves are real `serve-tools` processes started from the rendered description's own
`arguments` and `environment` (with $(ProcId) expanded as HTCondor would). Nobody waits on HTCondor,
so the replicas must notice the rollout's end by themselves: every shard's final file, never a
stale one from a previous run nor one another user planted."""

from __future__ import annotations

import json
import os
import shlex
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from ptbench.bootcamp.data.datagen import Shard
from ptbench.bootcamp.serving.replicas import new_run, read_replicas, read_token, replica_dir
from ptbench.rollout_launcher import htcondor as htcondor_replicas
from tests.bootcamp.conftest import require
from tests.rollout_launcher.test_tool_replicas import health, remote_sql_config, replica_processes

OPTIONS = {
    "python": sys.executable,
    "accounting_group": "group_llm.ptbench",
    "requirements": '(OpSysAndVer == "AlmaLinux9")',
    "container_image": "/shared/containers/ptbench.sif",
    "environment": {"HF_HOME": "/shared/hf"},
    "submit_lines": {"+ProjectName": '"ptbench"'},
}


@pytest.fixture
def htcondor2():
    try:
        import htcondor2 as mod  # 25.x ships only htcondor2
    except ImportError:
        mod = None
    require(mod is not None, "the htcondor Python bindings are not installed (pip install 'ptbench[condor]')")
    return mod


def _rollout_cli(
    tmp_path: Path, *extra: str, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess, Path]:
    campaign = tmp_path / "campaign.yaml"
    campaign.write_text(
        yaml.safe_dump(
            {"name": "x", "backend": {"name": "htcondor", "options": {**OPTIONS, "initialdir": str(tmp_path)}}}
        )
    )
    out = tmp_path / "out"
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "ptbench",
            "bootcamp",
            "rollout",
            str(remote_sql_config(tmp_path, 6)),
            "--endpoint",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "--out",
            str(out),
            "--shards",
            "3",
            "--tool-replicas",
            "2",
            "--backend-config",
            str(campaign),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    return res, out


def test_render_writes_a_replica_cluster_with_the_shards_options(tmp_path: Path, htcondor2) -> None:
    res, out = _rollout_cli(tmp_path, "--render")
    assert res.returncode == 0, res.stdout + res.stderr
    shards = htcondor2.Submit((out / "condor" / "shards.sub").read_text())
    tools = htcondor2.Submit((out / "condor" / "tool-servers.sub").read_text())
    assert tools.getQArgs().strip() == "2" and shards.getQArgs().strip() == "3"
    assert tools["arguments"] == (
        f"\"-m ptbench bootcamp serve-tools --dir '{out}' --replica $(ProcId) --host 0.0.0.0 "
        '--idle-exit 3600 --shards 3"'
    )
    for key in (
        "executable",
        "environment",
        "initialdir",
        "universe",
        "accounting_group",
        "requirements",
        "container_image",
        "transfer_container",
        "should_transfer_files",
        "MY.ProjectName",
        "MY.PtbenchRollout",
    ):
        assert tools[key] == shards[key], key
    assert tools["accounting_group"] == "group_llm.ptbench" and tools["requirements"] == '(OpSysAndVer == "AlmaLinux9")'
    assert tools["container_image"] == "/shared/containers/ptbench.sif" and "HF_HOME=/shared/hf" in tools["environment"]
    assert tools["executable"] == sys.executable and tools["log"].startswith(f"{out}/tool-servers/")
    assert not (replica_dir(out) / ".token").exists()  # rendering starts no run


def _standin_condor(tmp_path: Path, out: Path, *, fail_on: str = "") -> tuple[Path, Path]:
    """condor_submit that records (description, token mode at that moment) and answers cluster 88
    (or fails for `fail_on`); condor_rm that records its argv."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    calls = tmp_path / "calls.jsonl"
    head = f"#!{sys.executable}\nimport json, os, stat, sys\ncalls = open({str(calls)!r}, 'a')\n"
    (bindir / "condor_submit").write_text(
        head
        + f"""
token = {str(replica_dir(out) / ".token")!r}
mode = oct(stat.S_IMODE(os.stat(token).st_mode)) if os.path.exists(token) else None
record = {{"prog": "condor_submit", "description": os.path.basename(sys.argv[-1]), "token_mode": mode}}
calls.write(json.dumps(record) + "\\n")
if {fail_on!r} and sys.argv[-1].endswith({fail_on!r}):
    sys.stderr.write("ERROR: Failed to connect to local queue manager\\n")
    sys.exit(1)
print("2 job(s) submitted to cluster 88.")
"""
    )
    (bindir / "condor_rm").write_text(
        head + 'calls.write(json.dumps({"prog": "condor_rm", "argv": sys.argv[1:]}) + "\\n")\n'
    )
    for p in bindir.iterdir():
        p.chmod(0o755)
    return bindir, calls


def test_submit_writes_the_token_then_replicas_then_shards(tmp_path: Path) -> None:
    out = tmp_path / "out"
    bindir, calls = _standin_condor(tmp_path, out)
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", CONDOR_CONFIG="/dev/null")
    res, _ = _rollout_cli(tmp_path, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    seen = [json.loads(line) for line in calls.read_text().splitlines()]
    assert [(c["description"], c["token_mode"]) for c in seen] == [
        ("tool-servers.sub", "0o600"),
        ("shards.sub", "0o600"),
    ]
    jobs = json.loads((replica_dir(out) / "jobs.json").read_text())
    assert jobs["backend"] == "htcondor" and jobs["units"] == {"0": "88.0", "1": "88.1"}
    token = read_token(out)
    assert token not in (out / "condor" / "tool-servers.sub").read_text() + res.stdout + res.stderr
    status = subprocess.run(
        [sys.executable, "-m", "ptbench", "status", str(out)], capture_output=True, text=True, timeout=120, env=env
    )
    assert "tool-replica-1" in status.stdout, status.stdout + status.stderr


def test_shards_refused_by_the_schedd_take_the_replicas_down(tmp_path: Path) -> None:
    out = tmp_path / "out"
    bindir, calls = _standin_condor(tmp_path, out, fail_on="shards.sub")
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", CONDOR_CONFIG="/dev/null")
    res, _ = _rollout_cli(tmp_path, env=env)
    assert res.returncode == 2 and "condor_submit failed" in res.stderr, res.stdout + res.stderr
    seen = [json.loads(line) for line in calls.read_text().splitlines()]
    assert seen[-1] == {"prog": "condor_rm", "argv": ["88.0", "88.1"]}
    assert (replica_dir(out) / "done").exists()  # a replica that starts anyway leaves at once


def _start_replica(description, out: Path, proc: int, cluster: int = 7) -> subprocess.Popen:
    """What HTCondor would run for job `cluster.proc` of the replicas' description."""
    args = shlex.split(description["arguments"].strip('"').replace("$(ProcId)", str(proc)))
    job_env = dict(kv.split("=", 1) for kv in shlex.split(description["environment"].strip('"')))
    job_env = {k: v.replace("$(Cluster)", str(cluster)).replace("$(Process)", str(proc)) for k, v in job_env.items()}
    log = open(out / f"replica-{proc}.log", "ab")
    try:
        return subprocess.Popen(
            [description["executable"], *args],
            cwd=description["initialdir"],
            env={**os.environ, **job_env},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    finally:
        log.close()


def _announced(out: Path, token: str, proc: int, pid: int, wait_s: float = 60.0) -> dict:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        mine = [r for r in read_replicas(out, token) if r["replica"] == proc and r["pid"] == pid]
        if mine:
            return mine[0]
        time.sleep(0.2)
    raise AssertionError(
        f"replica {proc} (pid {pid}) never announced itself: {(out / f'replica-{proc}.log').read_text()[-2000:]}"
    )


def _done_file(out: Path, shard: Shard, owner: int | None = None) -> Path:
    path = out / "shards" / f"{shard.tag}.done.json"
    path.write_text(json.dumps({"ok": 1, "error": 0}))
    if owner is not None:
        os.chown(path, owner, owner)
    return path


def test_replicas_leave_once_every_shard_finished_and_only_then(tmp_path: Path, htcondor2) -> None:
    out = tmp_path / "out"
    (out / "shards").mkdir(parents=True)
    stale = _done_file(out, Shard(1, 2))  # a previous run's final file: older than this run's token
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    description = htcondor2.Submit(
        htcondor_replicas.render(out, 2, 2, {"python": sys.executable, "initialdir": str(tmp_path)}).read_text()
    )
    token = new_run(out)
    procs = [_start_replica(description, out, i) for i in range(2)]
    try:
        first = [_announced(out, token, i, p.pid) for i, p in enumerate(procs)]
        assert [r["job_id"] for r in first] == ["7.0", "7.1"]  # named as condor_q names them
        _done_file(out, Shard(0, 2))

        # HTCondor restarts replica 0: it re-announces with a new start, and its signed /health answers as that
        # new generation (index, pid, start: what the shards' pool compares before it sends episodes there)
        procs[0].send_signal(signal.SIGKILL)
        procs[0].wait()
        procs[0] = _start_replica(description, out, 0)
        again = _announced(out, token, 0, procs[0].pid)
        assert again["started_at"] > first[0]["started_at"]
        assert health(again["url"], token)[1]["started_at"] == again["started_at"]

        # not done yet: shard 1's file is stale, then (as root, which CI is) forged by another user, and so is `done`
        forged_done = replica_dir(out) / "done"
        if os.getuid() == 0:
            _done_file(out, Shard(1, 2), owner=65534)
            forged_done.write_text("")
            os.chown(forged_done, 65534, 65534)
        time.sleep(2.0)  # four of the replicas' 0.5 s checks
        assert all(p.poll() is None for p in procs), "a replica left before every shard of this run finished"
        assert all(health(r["url"], token)[0] == 200 for r in read_replicas(out, token))

        forged_done.unlink(missing_ok=True)
        _done_file(out, Shard(1, 2), owner=os.getuid())  # shard 1 finishes
        for p in procs:
            assert p.wait(timeout=30) == 0
        assert not list(replica_dir(out).glob("replica-*.json"))  # withdrawn on the way out
        assert replica_processes(out) == []
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    mode = stat.S_IMODE((replica_dir(out) / ".token").stat().st_mode)
    assert mode == 0o600
