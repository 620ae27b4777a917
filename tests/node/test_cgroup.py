"""The per-trial cgroup and the deadline's grace, on the real kernel: real cgroup v2, real bwrap.

Where this node has no writable cgroup v2 the cgroup tests skip (fail in CI). The parsing tests
feed /proc files in the formats the kernel writes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from ptbench.node.cgroup import TrialCgroup, own_cgroup
from tests.support import require


def _trial_cgroup(tmp_path: Path) -> TrialCgroup:
    cg, why = TrialCgroup.create(str(tmp_path / "trial"))
    require(cg is not None, f"no writable cgroup v2 here: {why}")
    return cg


def _proc(tmp_path: Path, cgroup: str, mountinfo: str) -> Path:
    (tmp_path / "cgroup").write_text(cgroup)
    (tmp_path / "mountinfo").write_text(mountinfo)
    return tmp_path


def test_own_cgroup_follows_mountinfo(tmp_path: Path) -> None:
    hier = tmp_path / "mnt point"
    (hier / "job_7" / "step_0").mkdir(parents=True)
    (hier / "job_7" / "step_0" / "cgroup.procs").write_text("")
    escaped = str(hier).replace(" ", "\\040")
    # A hybrid node's unified mount, and a bind mount of the job's part of the hierarchy (Slurm).
    proc = _proc(
        tmp_path,
        "4:memory:/x\n0::/slurm/job_7/step_0\n",
        f"31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n"
        f"41 31 0:38 /other {tmp_path}/nope rw - cgroup2 cgroup2 rw\n"
        f"42 31 0:38 /slurm {escaped} rw,relatime - cgroup2 cgroup2 rw,nsdelegate\n",
    )
    assert own_cgroup(proc) == (hier / "job_7" / "step_0", "")
    v1_only = _proc(
        tmp_path, "4:memory:/x\n1:name=systemd:/\n", "32 31 0:29 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
    )
    assert own_cgroup(v1_only)[0] is None and "v1" in own_cgroup(v1_only)[1]
    unmounted = _proc(tmp_path, "0::/user.slice\n", "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n")
    assert own_cgroup(unmounted)[0] is None and "/user.slice" in own_cgroup(unmounted)[1]


def test_not_delegated_is_reported_not_raised(tmp_path: Path) -> None:
    """A user the hierarchy is not delegated to (as under Slurm's default, root's step cgroup): no
    cgroup, and a reason, from the same code the runner runs (as nobody; node/cgroup.py is stdlib only)."""
    _trial_cgroup(tmp_path).kill_and_remove()  # this node has one for the tests' user
    if os.geteuid() == 0:
        require(
            shutil.which("setpriv") is not None and Path("/usr/bin/python3").exists(),
            "setpriv or /usr/bin/python3 missing",
        )
        argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3"]
    else:
        pytest.skip("the tests' user is not root: cannot become another user to be refused")
    code = (
        "from ptbench.node.cgroup import TrialCgroup; "
        "cg, why = TrialCgroup.create('/tmp/ptb-nodelegation'); print(cg, why)"
    )
    out = subprocess.run(
        [*argv, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": os.environ["PATH"], "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")},
    )
    assert out.stdout.startswith("None ") and "not delegated" in out.stdout, out.stdout + out.stderr


def test_cgroup_kill_reaches_a_process_outside_the_runners_tree(tmp_path: Path) -> None:
    """What the sweep cannot see: a double-forked process re-parented to init (this test process is no
    subreaper) that also dropped the trial's marker variable (env -i). The cgroup holds it anyway."""
    cg = _trial_cgroup(tmp_path)
    pid_file = tmp_path / "escaped.pid"
    escapee = f"setsid env -i bash -c 'trap \"\" TERM; echo $$ > {pid_file}; exec sleep 100000'"
    starter = cg.wrap(["bash", "-c", f"({escapee} </dev/null >/dev/null 2>&1 &)"])
    # The sweep runs in a fresh process, as the runner does, so it sees only its own descendants (this
    # pytest process holds others in a whole-suite run, which a sweep from here would kill).
    sweep = (
        "import subprocess, sys; from ptbench.runner.watchdog import terminate_descendants; "
        f"assert subprocess.run({starter!r}, timeout=30).returncode == 0; "
        "print(terminate_descendants(0.0))"
    )
    try:
        out = subprocess.run([sys.executable, "-c", sweep], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        while not pid_file.exists() or not pid_file.read_text().strip():
            time.sleep(0.05)
        escaped = psutil.Process(int(pid_file.read_text()))
        assert escaped.pid not in {p.pid for p in psutil.Process().children(recursive=True)}
        # the sweep found nothing to stop: the escaped process is out of its sight, and alive
        assert out.stdout.split() == ["0"] and escaped.is_running()
        assert cg.pids() == [escaped.pid] and cg.populated()
        cg.kill()
        assert cg.wait_empty(10)
        escaped.wait(10)
        assert cg.remove() and not cg.path.exists()
    finally:
        cg.kill_and_remove()


GRACEFUL = (
    "trap 'sleep 0.5; echo saved > term.txt; exit 0' TERM; cp -r base final_model 2>/dev/null; "
    "while :; do sleep 0.1; done"
)


# The watchdog runs in a fresh process, as the runner does: its subreaper sweep takes every descendant
# of its process, which in a pytest worker would include other tests' helpers.
GRACE_DRIVER = """
import json, os, subprocess, sys
from pathlib import Path
import psutil
from ptbench.node.cgroup import TrialCgroup
from ptbench.runner.watchdog import Watchdog
from ptbench.sandbox import SandboxRequest, build_command
from ptbench.sandbox.bwrap import python_paths
root, with_cgroup, script = Path(sys.argv[1]), sys.argv[2] == "1", sys.argv[3]
cg = None
if with_cgroup:
    cg, why = TrialCgroup.create(str(root / "trial"))
    if cg is None:
        print(json.dumps({"no_cgroup": why}))
        sys.exit(0)
req = SandboxRequest(argv=["bash", "-c", script], env={"PATH": os.environ["PATH"]}, workspace=root / "ws",
                     home=root / "home", read_only=python_paths())
command = build_command("bwrap", req)
events = []
watchdog = Watchdog(seconds_left=2.0, grace_seconds=10.0, warn_before=0.0,
                    on_event=lambda kind, **kw: events.append((kind, kw)), cgroup=cg)
try:
    outcome = watchdog.run(command.argv, cwd=str(command.cwd), env=command.env, stdout=subprocess.DEVNULL,
                           stderr=sys.stderr)
finally:
    if cg is not None:
        cg.kill_and_remove()
print(json.dumps({"timed_out": outcome.timed_out, "mechanism": dict(events)["terminated"]["mechanism"],
                  "cgroup_left": cg is not None and cg.path.exists(),
                  "children_left": [p.pid for p in psutil.Process().children(recursive=True)]}))
"""


@pytest.mark.parametrize("with_cgroup", [True, False], ids=["cgroup", "subreaper"])
def test_an_agent_under_bwrap_gets_its_grace(tmp_path: Path, with_cgroup: bool) -> None:
    """The deadline's SIGTERM reaches the agent inside bwrap, not bwrap (whose end would kill the
    sandbox at once): a handler that takes 0.5 s to save its work gets to finish."""
    require(shutil.which("bwrap") is not None, "bwrap is not installed: apt-get install bubblewrap")
    (tmp_path / "ws").mkdir()
    (tmp_path / "home").mkdir()
    out = subprocess.run(
        [sys.executable, "-c", GRACE_DRIVER, str(tmp_path), "1" if with_cgroup else "0", GRACEFUL],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    require("no_cgroup" not in got, f"no writable cgroup v2 here: {got.get('no_cgroup')}")
    assert got["timed_out"]
    assert (tmp_path / "ws" / "term.txt").read_text().strip() == "saved"
    assert got["mechanism"] == ("cgroup.kill" if with_cgroup else "subreaper")
    assert not got["cgroup_left"] and got["children_left"] == []
