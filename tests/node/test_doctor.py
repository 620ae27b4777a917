"""`ptbench doctor` on this machine, as a user runs it: real bwrap (works here), no GPU, the dev
Slurm cluster when SLURM_CONF is set; the GPU rows also through the NVML stand-in (no GPU here)."""

from __future__ import annotations

import json
import os

from tests.conftest import ptbench
from tests.node.test_gpu_checks import FAKE_DIR, gpu
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


def test_slurm_reachability():
    require(
        bool(os.environ.get("SLURM_CONF")),
        "the dev Slurm cluster (SLURM_CONF) is not running: bash scripts/slurm-dev-cluster.sh start",
    )
    ok = ptbench("doctor", "--backend", "slurm", env=WIDE)
    assert "partitions:" in rows(ok.stdout)["scheduler (slurm)"], ok.stdout
    bad = ptbench("doctor", "--backend", "slurm", env={**WIDE, "SLURM_CONF": "/nonexistent/slurm.conf"})
    assert bad.returncode == 1 and "✗" in rows(bad.stdout)["scheduler (slurm)"]


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
