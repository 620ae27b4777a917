"""A hostile agent under the default sandbox: nothing it starts outlives the deadline, nothing secret is read.

Real pieces: `ptbench trial run`, real bwrap, a real tmux server of the host's (started by the test
on its own socket, as a user's would be), and the fixture agent `escaper`, whose script (beside its
agent.yaml, found through PTBENCH_AGENTS_PATH) tries nohup, setsid + double fork, its own tmux
server, the host's tmux server, `at`, `systemd-run --user`, and reading a neighbour trial's login.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from pathlib import Path

import psutil
import pytest

from ptbench.node.cgroup import TrialCgroup
from ptbench.trial import TrialDir
from tests.conftest import ptbench
from tests.support import assert_run_exit, require

CAMPAIGN = """
name: esc
agents: [{name: escaper, options: {tag: "TAG", neighbour: "NEIGHBOUR", host_tmux: "HOSTTMUX"}}]
base_models: [{id: local/empty, path: "EMPTY", label: empty}]
tasks: [{name: arithmetic, options: {n_test: 4}}]
budget: {hours: 0.002, gpus: 0, grace_seconds: 2}  # 7.2 s; the escapes are all tried within ~0.1 s
results_dir: "@RESULTS@"
sandbox: SANDBOX
"""


def _survivors(tag: str) -> list[str]:
    out = []
    for p in psutil.process_iter(["cmdline"]):
        try:
            if any(f"ptb-escape-{tag}" in a for a in p.info["cmdline"] or []):
                out.append(f"{p.pid}: {' '.join(p.info['cmdline'])}")
        except psutil.Error:
            pass
    return out


@pytest.mark.slow
@pytest.mark.integration
def test_no_escape_survives_the_deadline_and_no_secret_is_read(write_campaign, test_agents, tmp_path: Path) -> None:
    require(shutil.which("bwrap") is not None, "bwrap is not installed: apt-get install bubblewrap")
    require(shutil.which("tmux") is not None, "tmux is not installed: apt-get install tmux")
    tag = uuid.uuid4().hex[:8]
    neighbour = tmp_path / "other-trial" / "home" / ".codex" / "auth.json"
    neighbour.parent.mkdir(parents=True)
    neighbour.write_text('{"token": "neighbour-canary-3b1c7f0e9d"}')
    host_sock = tmp_path / "host-tmux.sock"
    subprocess.run(["tmux", "-S", str(host_sock), "new-session", "-d", "sleep 600"], check=True, timeout=30)
    (tmp_path / "empty-model").mkdir()
    text = (
        CAMPAIGN.replace("SANDBOX", "bwrap")
        .replace("TAG", tag)
        .replace("NEIGHBOUR", str(neighbour))
        .replace("HOSTTMUX", str(host_sock))
    )
    path = write_campaign(text.replace("EMPTY", str(tmp_path / "empty-model")))
    try:
        out = ptbench("run", str(path), cwd=tmp_path)
        assert_run_exit(out, tmp_path / "results")
        trial = TrialDir(next((tmp_path / "results" / "esc").glob("*/trial.json")).parent)
        log = (trial.agent_dir / "native.log").read_text()
        assert "escapes tried" in log, log  # the script (from the agent's own folder) ran inside bwrap
        assert "host tmux: unreachable" in log and "neighbour: unreadable" in log and "neighbour-canary" not in log, log
        assert "SYSTEMD: reached" not in log and "AT: queued" not in log, log
        windows = subprocess.run(
            ["tmux", "-S", str(host_sock), "list-windows"], capture_output=True, text=True, timeout=30
        ).stdout
        assert len(windows.splitlines()) == 1, windows  # nothing was started through the host's server
        assert _survivors(tag) == []
        events = [json.loads(line) for line in trial.events_jsonl.read_text().splitlines()]
        kinds = [e["event"] for e in events]
        assert "deadline" in kinds and "terminated" in kinds
        # Where this node has a writable cgroup v2 the deadline used it (and said so); the trial's
        # cgroup is gone afterwards. Elsewhere the subreaper sweep alone, recorded as such.
        probe, why = TrialCgroup.create(str(tmp_path / "probe"))
        expected = "cgroup.kill" if probe is not None else "subreaper"
        if probe is not None:
            probe.kill_and_remove()
        assert next(e for e in events if e["event"] == "containment")["mechanism"] == expected, why
        assert next(e for e in events if e["event"] == "terminated")["mechanism"].startswith(expected)
        assert json.loads(trial.result_json.read_text())["deadline_kill"] == expected
        assert TrialCgroup.leftover(str(trial.path)) is None
        assert trial.load_state().stages["solve"].outcome == "timed_out"
    finally:
        subprocess.run(["tmux", "-S", str(host_sock), "kill-server"], capture_output=True, timeout=30)
        for line in _survivors(tag):  # leave nothing behind, whatever the assertions said
            psutil.Process(int(line.split(":")[0])).kill()
