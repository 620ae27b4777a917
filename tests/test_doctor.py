"""`ptbench doctor` on this machine, as a user runs it: real bwrap (works here), no GPU, the dev
Slurm cluster when SLURM_CONF is set; the GPU rows also through the NVML stand-in (no GPU here)."""

from __future__ import annotations

import json
import os

from tests.backends.slurm.cluster import unreachable_conf
from tests.conftest import ptbench
from tests.node.test_gpus import FAKE_DIR, gpu
from tests.support import require

WIDE = {"COLUMNS": "250"}


def rows(out: str) -> dict[str, str]:
    """check name -> its whole table row (state and fix)."""
    found = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.split("│")]
        if len(cells) >= 5 and cells[2]:
            found[cells[2]] = " ".join(cells[1:])
    return found


def test_doctor_on_this_node(tmp_path):
    secret = "sk-ant-doctor-0123456789abcdef"
    run = ptbench(
        "doctor", env={**WIDE, "ANTHROPIC_API_KEY": secret, "PTBENCH_CONTAINER_DIGESTS": str(tmp_path / "none.json")}
    )
    assert run.returncode == 0, run.stdout + run.stderr
    r = rows(run.stdout)
    assert "✓" in r["bubblewrap"] and "starts" in r["bubblewrap"]
    from ptbench.node.cgroup import TrialCgroup

    probe, _ = TrialCgroup.create(str(tmp_path / "probe"))  # what the runner would get here
    assert ("✓" if probe is not None else "!") in r["trial cgroup"]
    if probe is not None:
        probe.kill_and_remove()
    assert "!" in r["GPU and driver"]  # a warning on a node without GPU, not a failure
    assert "ANTHROPIC_API_KEY set" in r["keys claude-code"] and secret not in run.stdout + run.stderr
    assert "GEMINI_API_KEY" in r["keys gemini-cli"]


def test_a_compute_node_without_the_wanted_gpu_fails(tmp_path):
    run = ptbench("doctor", "--gpus", "1", env=WIDE)
    assert run.returncode == 1 and "✗" in rows(run.stdout)["GPU and driver"]


def test_gpu_rows_through_nvml(tmp_path):
    env = {**WIDE, "PYTHONPATH": os.pathsep.join([str(FAKE_DIR), os.environ.get("PYTHONPATH", "")])}
    busy = {"gpus": [gpu(), gpu(uuid="GPU-b", processes=[{"pid": 4_000_002, "used": 9e9}])]}
    run = ptbench("doctor", "--gpus", "2", env={**env, "PTBENCH_FAKE_NVML": json.dumps(busy)})
    r = rows(run.stdout)["GPU and driver"]
    assert (
        "driver 550.54.15, CUDA 12.4; 2 GPU(s): NVIDIA H100 80GB HBM3" in r
        and "in use by other processes" in r
        and "!" in r
    )


def test_a_recorded_image_that_is_gone_fails(tmp_path):
    digests = tmp_path / "digests.json"
    digests.write_text(
        json.dumps({"agent": {"image": str(tmp_path / "agent.sif"), "digest": "sha256:" + "0" * 64, "bytes": 10}})
    )
    run = ptbench("doctor", env={**WIDE, "PTBENCH_CONTAINER_DIGESTS": str(digests)})
    assert run.returncode == 1 and "missing" in rows(run.stdout)["image agent"]


def test_slurm_reachability(tmp_path):
    require(
        bool(os.environ.get("SLURM_CONF")),
        "the dev Slurm cluster (SLURM_CONF) is not running: bash scripts/slurm-dev-cluster.sh start",
    )
    ok = ptbench("doctor", "--backend", "slurm", env=WIDE)
    assert "partitions:" in rows(ok.stdout)["scheduler (slurm)"], ok.stdout
    down = unreachable_conf(os.environ["SLURM_CONF"], tmp_path / "down")  # the controller is not there
    bad = ptbench("doctor", "--backend", "slurm", env={**WIDE, "SLURM_CONF": str(down)})
    assert bad.returncode == 1 and "✗" in rows(bad.stdout)["scheduler (slurm)"]


def test_a_probe_that_does_not_answer_is_a_failure_not_a_hang():
    """What doctor's scheduler row gets from a client that hangs (sinfo with an unreadable SLURM_CONF
    retries for 60 s): exit 124 and a line, after the probe's timeout (20 s in doctor)."""
    from ptbench.core.preflight import probe

    assert probe(["sleep", "60"], timeout=1) == (124, "sleep 60: no answer in 1 s")


def test_unknown_backend_is_a_user_error():
    run = ptbench("doctor", "--backend", "pbs")
    assert run.returncode == 2 and "unknown backend" in run.stderr


def test_doctor_tells_whether_the_hf_cache_layer_mounts(tmp_path):
    """A real mount is tried: ready where fuse-overlayfs works (here), read-only said plainly where it is missing."""
    import shutil

    from ptbench.doctor import check_fuse_overlayfs

    require(
        shutil.which("fuse-overlayfs") is not None, "fuse-overlayfs not installed (scripts/install.sh test installs it)"
    )
    ok = check_fuse_overlayfs()
    assert ok.status == "ready" and "copy-on-write" in ok.detail, ok
    bin_dir = tmp_path / "bin"  # a PATH with bwrap and the rest, but without fuse-overlayfs
    bin_dir.mkdir()
    for tool in ("bwrap", "fusermount3", "umount"):
        if shutil.which(tool):
            os.symlink(shutil.which(tool), bin_dir / tool)
    old = os.environ["PATH"]
    os.environ["PATH"] = str(bin_dir)
    try:
        missing = check_fuse_overlayfs()
    finally:
        os.environ["PATH"] = old
    assert missing.status == "warn" and "not installed" in missing.detail and "read-only" in missing.detail, missing


HIDE_SUBMITIT = "import sys; sys.modules['submitit'] = None; from ptbench.cli.main import main; main()"
HIDE_HTCONDOR = "import sys; sys.modules['htcondor2'] = None; from ptbench.cli.main import main; main()"


def _doctor_child(hide: str, *args: str, env: dict | None = None):
    """`ptbench doctor ARGS` in a child where a client library's import fails (as if not installed)."""
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-c", hide, "doctor", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **WIDE, **(env or {})},
    )


def test_slurm_without_submitit_fails_its_client_row_and_never_says_all_passed():
    run = _doctor_child(HIDE_SUBMITIT, "--backend", "slurm")
    row = rows(run.stdout)["slurm client"]
    assert run.returncode == 1 and "✗" in row and "pip install 'ptbench[slurm]'" in row, run.stdout
    assert "all passed" not in run.stdout and "slurm client" in run.stdout.splitlines()[-1]
    ok = ptbench("doctor", "--backend", "slurm", env=WIDE)  # the control: submitit is installed here
    assert "✓" in rows(ok.stdout)["slurm client"] and "submitit" in rows(ok.stdout)["slurm client"]


def test_htcondor_without_bindings_or_condor_submit_fails_its_client_row(tmp_path):
    bare = {"PATH": "/usr/bin:/bin"}  # no condor_submit there (asserted below)
    import shutil

    assert shutil.which("condor_submit", path=bare["PATH"]) is None
    run = _doctor_child(HIDE_HTCONDOR, "--backend", "htcondor", env=bare)
    row = rows(run.stdout)["htcondor client"]
    assert run.returncode == 1 and "✗" in row and "ptbench[condor]" in row and "condor_submit" in row, run.stdout
    # The control: condor_submit on PATH is enough to submit without the bindings.
    (tmp_path / "condor_submit").write_text("#!/bin/sh\nexit 0\n")
    (tmp_path / "condor_submit").chmod(0o755)
    found = _doctor_child(HIDE_HTCONDOR, "--backend", "htcondor", env={"PATH": f"{tmp_path}:/usr/bin:/bin"})
    assert "✓" in rows(found.stdout)["htcondor client"] and str(tmp_path) in rows(found.stdout)["htcondor client"]


NEEDS_CLI = """# Test agent (doctor): runs a CLI that no machine has unless the test puts it on PATH.
name: needs-cli
executable: ptbench-doctor-test-cli
package: ptbench-doctor-test-cli@1.0.0
install: put ptbench-doctor-test-cli on PATH
command: ["{{ executable }}"]
"""


def test_doctor_campaign_fails_when_an_agent_cli_it_needs_is_missing(tmp_path):
    agents = tmp_path / "agents"
    (agents / "needs-cli").mkdir(parents=True)
    (agents / "needs-cli" / "agent.yaml").write_text(NEEDS_CLI)
    (tmp_path / "model").mkdir()
    campaign = tmp_path / "c.yaml"
    campaign.write_text(
        f"name: dr\nagents: [{{name: needs-cli}}]\nbase_models: [{{id: local/m, path: {tmp_path / 'model'}}}]\n"
        f"tasks: [arithmetic]\nbudget: {{hours: 1, gpus: 0}}\nresults_dir: {tmp_path / 'results'}\n"
    )
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    env = {**WIDE, "PTBENCH_AGENTS_PATH": str(agents), "PATH": f"{bin_dir}:/usr/bin:/bin"}
    env["PTBENCH_CONTAINER_DIGESTS"] = str(tmp_path / "none.json")
    run = ptbench("doctor", str(campaign), env=env)
    row = rows(run.stdout)["agent CLI ptbench-doctor-test-cli"]
    assert run.returncode == 1 and "✗" in row and "not installed (for needs-cli)" in row, run.stdout
    assert "keys claude-code" not in run.stdout  # only the campaign's agents are checked
    assert not (tmp_path / "results").exists()  # doctor creates nothing
    # Without a campaign the same missing CLI is a warning (only campaigns using it need it).
    loose = ptbench("doctor", env=env)
    assert "!" in rows(loose.stdout)["agent CLI ptbench-doctor-test-cli"]
    # The control: the CLI on PATH.
    (bin_dir / "ptbench-doctor-test-cli").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "ptbench-doctor-test-cli").chmod(0o755)
    ok = ptbench("doctor", str(campaign), env=env)
    assert ok.returncode == 0 and "✓" in rows(ok.stdout)["agent CLI ptbench-doctor-test-cli"], ok.stdout


def test_summary_counts_warnings_and_never_says_all_passed_beside_one():
    from ptbench.doctor import Check, summary

    line = summary([Check("a", "ready", ""), Check("b", "warn", "x", "fix b")])
    assert line == "1 passed, 1 warning(s), 0 failed (of 2 checks)"
    assert summary([Check("a", "ready", ""), Check("c", "fail", "y")]).endswith("; fix: c")
