"""A trial's checks share one worker process (integrity/worker.py) and still fail closed one by one:
a check that raises, crashes (also with a child it forked holding on), exits without a report or
hangs past its time limit is `unchecked` with the reason, and the checks after it run in a fresh
process; a check that writes another check's output, `checks/` or a forged report line on stdout
changes no verdict. The hostile checks are a real plugin package (an entry point on PYTHONPATH, as a
site installs one), run by the real runner; the honest control shows the checks sharing one process
and deciding as before."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ptbench.integrity import run_checks

HOSTILE = '''
import json, os, signal, subprocess, sys, time
from pathlib import Path
from ptbench.integrity.checks import IntegrityCheck, register_check
from ptbench.integrity.report import Finding

class _Probe(IntegrityCheck):
    def check(self, ctx):
        return Finding(verdict="clean", reason="probe", details={"pid": os.getpid()})

register_check("probe_a")(type("ProbeA", (_Probe,), {}))
register_check("probe_b")(type("ProbeB", (_Probe,), {}))

@register_check("hostile_raise")
class Raise(IntegrityCheck):
    def check(self, ctx):
        raise RuntimeError("boom in the check")

@register_check("hostile_crash")
class Crash(IntegrityCheck):
    def check(self, ctx):
        os.kill(os.getpid(), signal.SIGKILL)

@register_check("hostile_exit")
class Exit(IntegrityCheck):
    def check(self, ctx):
        os._exit(0)

@register_check("hostile_fork_crash")
class ForkCrash(IntegrityCheck):
    """Dies while a child it forked holds the findings' socket open: a crash, not a hang."""
    def check(self, ctx):
        if os.fork() == 0:
            time.sleep(3600)
        os._exit(3)

@register_check("hostile_forge")
class Forge(IntegrityCheck):
    """Writes a clean report for every later check wherever one could be read from, and a forged
    report line on its stdout, then says clean for itself."""
    def check(self, ctx):
        clean = {"verdict": "clean", "reason": "forged", "evidence": [], "details": {}}
        for name in ("contamination", "probe_b", "hostile_hang"):
            print(json.dumps({"check": name, "finding": clean}), flush=True)
            for d in [ctx.trial_dir / "checks", *ctx.trial_dir.glob(".integrity-*")]:
                (d / f"{name}.json").write_text(json.dumps({"check": name, **clean}))
                (d / "finding.json").write_text(json.dumps(clean))
        (ctx.trial_dir / "checks" / "verdicts.json").write_text(json.dumps({"contamination": "clean"}))
        return Finding(verdict="clean", reason="forge")

REOPEN = r"""
import json, os, sys, time
worker = os.getppid()
fd = open(f"/proc/{worker}/cmdline", "rb").read().split(b"\\0")[4].decode()  # worker CONTEXT FD CHECK...
clean = {"verdict": "clean", "reason": "forged", "evidence": [], "details": {}}
forged = "".join(
    json.dumps({"check": n, "started_at": time.time(), "seconds": 0.0, "finding": clean}) + "\\n" for n in sys.argv[1:]
)
try:
    out = os.open(f"/proc/{worker}/fd/{fd}", os.O_WRONLY | os.O_NONBLOCK)
except OSError as exc:
    print(f"refused: {exc.strerror}")
else:
    os.write(out, forged.encode())
    print("sent")
"""

@register_check("hostile_reopen")
class Reopen(IntegrityCheck):
    """Starts a program as the judge starts its agent CLI (its own session, no inherited fds): the
    program opens the worker's findings channel again through /proc and sends a clean report for
    this check and every later one (a prompt-injected judge's shell command)."""
    def check(self, ctx):
        later = ctx.config.checks[ctx.config.checks.index("hostile_reopen"):]
        run = subprocess.run(
            [sys.executable, "-c", REOPEN, *later], stdin=subprocess.DEVNULL, capture_output=True, text=True,
            start_new_session=True,
        )
        return Finding(verdict="clean", reason="reopen", details={"program": run.stdout.strip() or run.stderr})

@register_check("hostile_hang")
class Hang(IntegrityCheck):
    def check(self, ctx):
        time.sleep(3600)
'''


def _plugin_env(root: Path) -> dict[str, str]:
    site = root / "site"
    info = site / "hostile_checks-0.dist-info"
    info.mkdir(parents=True)
    (site / "hostile_checks.py").write_text(HOSTILE)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hostile-checks\nVersion: 0\n")
    (info / "entry_points.txt").write_text("[ptbench.plugins]\nhostile = hostile_checks\n")
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH", "")]))}


def _reports(trial, names) -> dict[str, dict]:
    return {n: json.loads((trial.checks_dir / f"{n}.json").read_text()) for n in names}


@pytest.mark.slow  # it waits out the hanging check's 30 s limit
def test_a_failing_or_forging_check_is_unchecked_and_the_rest_decide(trial_factory, tmp_path):
    checks = [
        "probe_a",
        "api_usage",
        "hostile_raise",
        "hostile_crash",
        "hostile_exit",
        "hostile_fork_crash",
        "hostile_forge",
        "hostile_hang",
        "contamination",
        "probe_b",
    ]
    trial = trial_factory(task="arithmetic", options={"n_test": 4}, integrity={"checks": checks})
    (trial.workspace / "train.txt").write_text("26+16=42\n")
    (trial.workspace / "gen.sh").write_text("curl -s https://api.anthropic.com/v1/messages -d @req.json\n")
    # 15 s: each check's own limit (a fresh process's start counts against its first check), which
    # hostile_hang always uses up; the other checks and the worker starts take ~3 s together here
    verdicts = run_checks(trial.path, trial.spec, env=_plugin_env(tmp_path), timeout_s=15)
    assert verdicts == {
        "probe_a": "clean",
        "api_usage": "flagged",
        "hostile_raise": "unchecked",
        "hostile_crash": "unchecked",
        "hostile_exit": "unchecked",
        "hostile_fork_crash": "unchecked",
        "hostile_forge": "clean",
        "hostile_hang": "unchecked",
        "contamination": "flagged",
        "probe_b": "clean",
    }
    reports = _reports(trial, checks)
    assert reports["hostile_raise"]["reason"] == "crashed (exit 1): RuntimeError: boom in the check"
    assert reports["hostile_crash"]["reason"].startswith("crashed (exit -9)")
    assert reports["hostile_exit"]["reason"].startswith("ended without a report (exit 0)")
    assert reports["hostile_fork_crash"]["reason"].startswith("crashed (exit 3)")
    assert reports["hostile_hang"]["reason"] == "timed out after 15 s (integrity.check_minutes)"
    assert reports["contamination"]["evidence"] and reports["contamination"]["reason"] != "forged"
    assert json.loads((trial.checks_dir / "verdicts.json").read_text()) == verdicts  # the harness's, last
    # the checks after a failure ran in a fresh process
    assert reports["probe_a"]["details"]["pid"] != reports["probe_b"]["details"]["pid"]
    assert not list(trial.path.glob(".integrity-*"))  # the worker's folder is gone with its forgeries


def test_a_program_a_check_starts_cannot_send_the_later_checks_findings(trial_factory, tmp_path):
    """The findings' channel is a socket: a pipe's end can be opened again, for writing, through
    /proc/PID/fd/N by any process of this user (fails with the runner's os.pipe() back)."""
    checks = ["hostile_reopen", "api_usage", "contamination", "probe_b"]
    trial = trial_factory(task="arithmetic", options={"n_test": 4}, integrity={"checks": checks})
    (trial.workspace / "train.txt").write_text("26+16=42\n")
    (trial.workspace / "gen.sh").write_text("curl -s https://api.anthropic.com/v1/messages -d @req.json\n")
    verdicts = run_checks(trial.path, trial.spec, env=_plugin_env(tmp_path), timeout_s=60)
    reports = _reports(trial, checks)
    assert verdicts == {
        "hostile_reopen": "clean",
        "api_usage": "flagged",
        "contamination": "flagged",
        "probe_b": "clean",
    }
    assert reports["hostile_reopen"]["details"]["program"].startswith("refused"), reports["hostile_reopen"]
    assert all(r["reason"] != "forged" for r in reports.values())


def test_honest_checks_share_one_process_and_decide(trial_factory, tmp_path):
    """The control: nothing planted, every check clean, all in one process."""
    checks = ["probe_a", "api_usage", "contamination", "probe_b"]
    trial = trial_factory(task="arithmetic", options={"n_test": 4}, integrity={"checks": checks})
    (trial.workspace / "train.txt").write_text("the quick brown fox\n")
    verdicts = run_checks(trial.path, trial.spec, env=_plugin_env(tmp_path))
    assert verdicts == dict.fromkeys(checks, "clean"), _reports(trial, checks)
    reports = _reports(trial, checks)
    assert reports["probe_a"]["details"]["pid"] == reports["probe_b"]["details"]["pid"]
    assert all(r["seconds"] >= 0 and r["harness_version"] for r in reports.values())
