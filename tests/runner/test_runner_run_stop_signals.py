"""`ptbench run` stops its runners on SIGINT even when started as a script's background job (SIGINT
inherited as ignored), and on SIGTERM, instead of ignoring it or dying and orphaning the runners."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import psutil
import pytest

from tests.servers import running, wait_gone

CAMPAIGN = """
name: stop
agents: [{name: slow-copy, options: {seconds: 600}}]
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [{name: arithmetic, options: {n_test: 6}}]
seeds: [0]
budget: {hours: 1, gpus: 0, grace_seconds: 2}
results_dir: "@RESULTS@"
parallelism: 1
evaluation: {engine: transformers}
"""


def _trial_processes(cdir: Path) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter():
        try:
            if str(cdir) in p.environ().get("PTBENCH_TRIAL_DIR", "") or any(str(cdir) in a for a in p.cmdline()[1:]):
                found.append(p)
        except psutil.Error:
            pass
    return found


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_run_stops_its_runners_on_a_stop_signal(
    write_campaign, test_agents, tmp_path: Path, sig: signal.Signals
) -> None:
    path = write_campaign(CAMPAIGN)
    cdir, log = tmp_path / "results" / "stop", tmp_path / "run.log"
    started = cdir / "slow-copy__tiny__arithmetic__s0" / "workspace" / "starts.txt"
    with running(["run", str(path)], log, ignore_sigint=True) as proc:
        deadline = time.monotonic() + 120
        while not started.exists():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.2)
        proc.send_signal(sig)
        assert wait_gone(proc, log, sig.name) == 130, log.read_text()[-2000:]
        assert _trial_processes(cdir) == [], "the runner and its agent are stopped, not orphaned"
    assert not (cdir / "slow-copy__tiny__arithmetic__s0" / "result.json").exists(), "interrupted, so resumable"
