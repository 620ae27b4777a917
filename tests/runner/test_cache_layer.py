"""The agent's HF cache as a per-trial copy-on-write layer: real fuse-overlayfs under real bwrap.

An agent inside the sandbox writes, changes and deletes files in the cache; the shared cache is
byte-identical afterwards, the changes are in the trial's upper layer, another trial does not see
them, nothing stays mounted or running. Where the layer cannot be mounted the cache is read-only.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import psutil
import pytest

from ptbench.integrity.context import CheckContext
from ptbench.runner.cache_layer import cache_layer, mounted, overlay_problem
from ptbench.sandbox import SandboxRequest, build_command
from tests.support import require


def _require() -> None:
    require(shutil.which("bwrap") is not None, "bubblewrap not installed (apt-get install bubblewrap)")
    require(
        overlay_problem() is None,
        f"fuse-overlayfs cannot mount here: {overlay_problem()} (scripts/install.sh test installs it)",
    )


def _tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        for p in sorted(root.rglob("*"))
    }


def _shared(tmp_path: Path, name: str = "hf") -> Path:
    shared = tmp_path / name
    snap = shared / "hub" / "models--org--forbidden" / "snapshots" / "abc"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text('{"model_type": "llama"}')
    (snap / "model.safetensors").write_bytes(os.urandom(4096))
    (shared / "hub" / "datasets--org--test").mkdir(parents=True)
    (shared / "hub" / "datasets--org--test" / "test.jsonl").write_text('{"q": "2+2", "a": "4"}\n')
    return shared


def _in_sandbox(trial: Path, binds: list, script: str) -> subprocess.CompletedProcess:
    ws, home = trial / "workspace", trial / "home"
    ws.mkdir(parents=True, exist_ok=True)
    home.mkdir(exist_ok=True)
    req = SandboxRequest(
        argv=["bash", "-c", script],
        env={"PATH": os.environ["PATH"], "HOME": str(home)},
        workspace=ws,
        home=home,
        binds=binds,
    )
    cmd = build_command("bwrap", req)
    return subprocess.run(cmd.argv, env=cmd.env, cwd=cmd.cwd, capture_output=True, text=True, timeout=120)


def _no_daemon_for(merged: Path) -> None:
    left = [p.pid for p in psutil.process_iter(["cmdline"]) if str(merged) in (p.info["cmdline"] or [])]
    assert left == [], f"fuse-overlayfs for {merged} still running: {left}"


def test_agent_changes_land_in_its_layer_and_the_shared_cache_stays_evidence(tmp_path: Path) -> None:
    _require()
    shared = _shared(tmp_path)
    before = _tree(shared)
    snap = shared / "hub" / "models--org--forbidden" / "snapshots" / "abc"
    script = textwrap.dedent(f"""
        set -e
        rm -rf {shared}/hub/models--org--forbidden            # destroy the forbidden-model evidence
        echo poisoned > {shared}/hub/datasets--org--test/test.jsonl
        mkdir -p {shared}/hub/models--org--new && echo '{{}}' > {shared}/hub/models--org--new/config.json
        test ! -e {snap}/config.json && echo gone-inside
    """)
    trial_a = tmp_path / "trial-a"
    with cache_layer(trial_a / "hf-layer", "bwrap", shared) as layer:
        assert (
            layer is not None
            and layer.mode == "overlay"
            and layer.binds == [(trial_a / "hf-layer" / "merged", shared.resolve(), "rw")]
        )
        out = _in_sandbox(trial_a, layer.binds, script)
        assert out.returncode == 0 and "gone-inside" in out.stdout, out.stderr
        merged = trial_a / "hf-layer" / "merged"
        assert mounted(merged)
        [daemon] = [p for p in psutil.process_iter(["cmdline"]) if str(merged) in (p.info["cmdline"] or [])]
        assert set(daemon.environ()) <= {"PATH", "LANG"}  # it carries none of the runner's keys
        assert daemon.ppid() != os.getpid()
    assert not mounted(merged)
    _no_daemon_for(merged)
    assert _tree(shared) == before  # byte-identical: nothing the agent did reached the shared cache
    upper = trial_a / "hf-layer" / "upper"
    assert (upper / "hub" / "datasets--org--test" / "test.jsonl").read_text() == "poisoned\n"
    assert (upper / "hub" / "models--org--new" / "config.json").exists()
    # the deletion is a whiteout in the upper layer, not a deletion below
    assert (upper / "hub" / "models--org--forbidden").exists() or (
        upper / "hub" / ".wh.models--org--forbidden"
    ).exists()
    # the integrity checks count everything in the layer as the agent's, whatever its mtime
    ctx = CheckContext(trial_dir=trial_a, spec=None, cache_dirs=[shared, upper], since=4e9, layer_dirs=[upper])
    assert ctx.fresh(upper, upper / "hub" / "datasets--org--test") and not ctx.fresh(shared, shared / "hub")

    trial_b = tmp_path / "trial-b"  # a later trial sees the pristine cache, not trial a's changes
    with cache_layer(trial_b / "hf-layer", "bwrap", shared) as layer:
        out = _in_sandbox(
            trial_b,
            layer.binds,
            f"cat {shared}/hub/datasets--org--test/test.jsonl; ls {snap}; "
            f"ls {shared}/hub/models--org--new 2>&1 || true",
        )
    assert out.returncode == 0, out.stderr
    assert '"a": "4"' in out.stdout and "poisoned" not in out.stdout and "model.safetensors" in out.stdout
    assert "No such file" in out.stdout
    _no_daemon_for(trial_b / "hf-layer" / "merged")


def test_where_the_layer_cannot_be_mounted_the_cache_is_read_only(tmp_path: Path) -> None:
    """A real mount failure (fuse-overlayfs's option syntax cannot carry a ',' in a path): read-only,
    with the reason."""
    require(shutil.which("bwrap") is not None, "bubblewrap not installed (apt-get install bubblewrap)")
    shared = _shared(tmp_path, "hf,cache")
    before = _tree(shared)
    trial = tmp_path / "trial"
    with cache_layer(trial / "hf-layer", "bwrap", shared) as layer:
        assert layer.mode == "read-only" and layer.reason and layer.to_json()["reason"]
        out = _in_sandbox(
            trial,
            layer.binds,
            f"echo x > '{shared}/hub/new.txt' && echo WROTE; "
            f"rm -f '{shared}/hub/datasets--org--test/test.jsonl' && echo DELETED; "
            f"cat '{shared}/hub/datasets--org--test/test.jsonl'",
        )
    assert "WROTE" not in out.stdout and "DELETED" not in out.stdout and '"a": "4"' in out.stdout, (
        out.stdout,
        out.stderr,
    )
    assert _tree(shared) == before


def test_unsandboxed_is_recorded_as_shared(tmp_path: Path) -> None:
    shared = _shared(tmp_path)
    with cache_layer(tmp_path / "trial" / "hf-layer", "none", shared) as layer:
        assert layer.mode == "shared" and layer.to_json()["mode"] == "shared"


DRIVER = """
import json, subprocess, sys
from pathlib import Path
from ptbench.runner.cache_layer import cache_layer, mounted
from ptbench.runner.watchdog import become_subreaper, terminate_descendants
assert become_subreaper()
root, shared = Path(sys.argv[1]), Path(sys.argv[2])
report = {}
with cache_layer(root, "bwrap", shared) as layer:
    merged = root / "merged"
    terminate_descendants(1)  # the deadline sweep between two runs of the agent (a continuation)
    report["after_sweep"] = mounted(merged) and (merged / "hub").is_dir()
    import ctypes
    flag = ctypes.c_int(0)
    ctypes.CDLL(None).prctl(37, ctypes.byref(flag), 0, 0, 0)
    report["subreaper_again"] = flag.value == 1
report["mounted_after"] = mounted(root / "merged")
print(json.dumps(report))
"""


def test_the_layer_survives_the_deadline_sweep_and_the_runner_stays_a_subreaper(tmp_path: Path) -> None:
    _require()
    shared = _shared(tmp_path)
    out = subprocess.run(
        [sys.executable, "-c", DRIVER, str(tmp_path / "hf-layer"), str(shared)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report == {"after_sweep": True, "subreaper_again": True, "mounted_after": False}
    _no_daemon_for(tmp_path / "hf-layer" / "merged")


def test_a_layer_left_mounted_by_a_killed_runner_is_replaced_and_its_changes_kept(tmp_path: Path) -> None:
    _require()
    shared = _shared(tmp_path)
    root = tmp_path / "hf-layer"
    (root / "upper" / "hub").mkdir(parents=True)
    (root / "upper" / "hub" / "mine.txt").write_text("from the first attempt")
    (root / "merged").mkdir()
    (root / "old-work").mkdir()
    # what a runner killed -9 leaves: the layer still mounted, its daemon running
    subprocess.run(
        [
            "fuse-overlayfs",
            "-o",
            f"lowerdir={shared},upperdir={root / 'upper'},workdir={root / 'old-work'}",
            str(root / "merged"),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    assert mounted(root / "merged")
    try:
        with cache_layer(root, "bwrap", shared) as layer:
            assert layer.mode == "overlay"
            assert (root / "merged" / "hub" / "mine.txt").read_text() == "from the first attempt"
    finally:
        if mounted(root / "merged"):
            subprocess.run(["fusermount3", "-u", str(root / "merged")], timeout=30)
    assert not mounted(root / "merged")
    _no_daemon_for(root / "merged")


@pytest.fixture(autouse=True)
def _nothing_left_mounted(tmp_path: Path):
    yield
    left = [line for line in Path("/proc/self/mountinfo").read_text().splitlines() if str(tmp_path) in line]
    assert left == [], left
