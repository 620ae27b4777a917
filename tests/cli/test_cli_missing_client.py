"""A scheduler whose client library is missing: `render` and `submit` share one check and say it in one
line (exit 2) before anything is planned or written (issue 31: render without submitit printed a
60-line traceback and left an empty submit/ folder)."""

from __future__ import annotations

import subprocess
import sys

import pytest

HIDE = "import sys; sys.modules['submitit'] = None; from ptbench.cli.main import main; main()"
CAMPAIGN = """
name: noclient
agents: [{name: base-model}]
base_models: [{id: local/tiny, path: "@DIR@", label: tiny}]
tasks: [arithmetic]
budget: {hours: 1, gpus: 0}
results_dir: "@RESULTS@"
"""


@pytest.mark.parametrize("command", ["render", "submit"])
def test_slurm_without_submitit_is_one_line_and_writes_nothing(tmp_path, command):
    (tmp_path / "tiny").mkdir()
    path = tmp_path / "c.yaml"
    path.write_text(CAMPAIGN.replace("@DIR@", str(tmp_path / "tiny")).replace("@RESULTS@", str(tmp_path / "results")))
    proc = subprocess.run(
        [sys.executable, "-c", HIDE, command, str(path), "--backend", "slurm"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.strip().splitlines() == ["error: the slurm backend needs submitit: pip install 'ptbench[slurm]'"]
    assert not (tmp_path / "results").exists()


def test_htcondor_submit_without_bindings_or_condor_submit_is_one_line_and_writes_nothing(tmp_path):
    """The htcondor backend submits through the htcondor2 bindings or condor_submit: with neither, submit
    says so before planning (`HTCondorBackend.check_client`, the check `ptbench doctor` reports too)."""
    import os
    import shutil

    (tmp_path / "tiny").mkdir()
    path = tmp_path / "c.yaml"
    path.write_text(CAMPAIGN.replace("@DIR@", str(tmp_path / "tiny")).replace("@RESULTS@", str(tmp_path / "results")))
    assert shutil.which("condor_submit", path="/usr/bin:/bin") is None
    proc = subprocess.run(
        [sys.executable, "-c", HIDE.replace("submitit", "htcondor2"), "submit", str(path), "--backend", "htcondor"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.strip().splitlines() == [
        "error: the htcondor backend needs the htcondor2 bindings (pip install 'ptbench[condor]') or condor_submit "
        "on PATH"
    ]
    assert not (tmp_path / "results").exists()
