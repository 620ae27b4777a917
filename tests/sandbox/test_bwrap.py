"""bubblewrap, for real: the agent's view of the filesystem, and the watchdog still stops everything."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from ptbench.sandbox import SandboxRequest, build_command
from ptbench.sandbox.bwrap import python_paths
from tests.support import require


def _layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    repo = tmp_path / "repo"
    (repo / "results" / "camp" / "other-trial").mkdir(parents=True)
    (repo / "results" / "camp" / "other-trial" / "secret.txt").write_text("other trial's data")
    (repo / ".env").write_text("ANTHROPIC_API_KEY=sk-canary-in-dotenv\n")
    harness = repo / "results" / "camp" / ".harness" / "eval-cache" / "memorization"  # base scores, judge cache
    harness.mkdir(parents=True)
    (harness / "scores.json").write_text("{}")
    trial = repo / "results" / "camp" / "this-trial"
    for d in ("workspace", "home"):
        (trial / d).mkdir(parents=True)
    return repo, trial / "workspace", trial / "home"


def test_agent_sees_only_its_workspace_home_and_tools(tmp_path: Path) -> None:
    require(shutil.which("bwrap") is not None, "bubblewrap not installed (apt-get install bubblewrap)")
    repo, ws, home = _layout(tmp_path)
    script = textwrap.dedent(f"""
        echo made > {ws}/inside.txt && echo ws-ok
        echo home > $HOME/h.txt && echo home-ok
        cat {repo}/.env 2>/dev/null && echo SAW-DOTENV
        ls {repo}/results/camp/other-trial 2>/dev/null | grep -q secret && echo SAW-OTHER-TRIAL
        cat {repo}/results/camp/.harness/eval-cache/memorization/scores.json 2>/dev/null && echo SAW-HARNESS-CACHE
        echo x > {repo}/results/camp/.harness/eval-cache/memorization/scores.json 2>/dev/null
        echo x > {repo}/escaped.txt 2>/dev/null; echo x > {ws}/../escaped.txt 2>/dev/null
        echo x > /tmp/private.txt && echo tmp-ok
        echo x > /usr/escaped.txt 2>/dev/null && echo WROTE-USR
        {sys.executable} -c "import ptbench, transformers; print('python-ok')"
        echo pid=$$
    """)
    req = SandboxRequest(
        argv=["bash", "-c", script],
        env={"PATH": os.environ["PATH"], "HOME": str(home)},
        workspace=ws,
        home=home,
        read_only=python_paths() + [Path(__import__("ptbench").__file__).resolve().parents[1]],
    )
    cmd = build_command("bwrap", req)
    out = subprocess.run(cmd.argv, env=cmd.env, cwd=cmd.cwd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    for ok in ("ws-ok", "home-ok", "tmp-ok", "python-ok", "pid=2"):
        assert ok in out.stdout, (ok, out.stdout, out.stderr)
    for bad in ("SAW-DOTENV", "SAW-OTHER-TRIAL", "SAW-HARNESS-CACHE", "WROTE-USR"):
        assert bad not in out.stdout
    assert (ws / "inside.txt").read_text() == "made\n" and (home / "h.txt").exists()
    assert not (repo / "escaped.txt").exists() and not (ws.parent / "escaped.txt").exists()
    assert (repo / "results" / "camp" / ".harness" / "eval-cache" / "memorization" / "scores.json").read_text() == "{}"
    assert not Path("/tmp/private.txt").exists() or Path("/tmp/private.txt").stat().st_mtime < 0


WATCHDOG_DRIVER = """
import json, os, sys, psutil
from pathlib import Path
from ptbench.runner.watchdog import Watchdog, become_subreaper
from ptbench.core.jobenv import TRIAL_ENV_MARKER
from ptbench.sandbox import SandboxRequest, build_command
ws, home, marker = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
become_subreaper()
script = "setsid sleep 1000 & (sleep 1001 &) ; nohup sleep 1002 >/dev/null 2>&1 & trap '' TERM; sleep 1003"
env = {"PATH": os.environ["PATH"], "HOME": str(home), TRIAL_ENV_MARKER: marker}
req = SandboxRequest(argv=["bash", "-c", script], env=env, workspace=ws, home=home)
cmd = build_command("bwrap", req)
events = []
out = Watchdog(seconds_left=3, grace_seconds=2, warn_before=1, on_event=lambda k, **kw: events.append(k)).run(
    cmd.argv, cwd=str(cmd.cwd), env=cmd.env, stdout=None, stderr=None)
left = []
for p in psutil.process_iter():
    try:
        if p.environ().get(TRIAL_ENV_MARKER) == marker:
            left.append(p.pid)
    except psutil.Error:
        pass
print(json.dumps({"timed_out": out.timed_out, "events": events, "left": left}))
"""


def test_watchdog_stops_every_process_inside_bwrap(tmp_path: Path) -> None:
    """Daemonised and TERM-ignoring processes in the sandbox's PID namespace are all gone after the deadline."""
    require(shutil.which("bwrap") is not None, "bubblewrap not installed (apt-get install bubblewrap)")
    _, ws, home = _layout(tmp_path)
    marker = f"bwrap-watchdog-{os.getpid()}"
    out = subprocess.run(
        [sys.executable, "-c", WATCHDOG_DRIVER, str(ws), str(home), marker], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    import json

    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["timed_out"] and "deadline" in report["events"] and "terminated" in report["events"]
    assert report["left"] == []
