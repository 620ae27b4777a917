"""The verl hand-off with the real verl 0.9.1: runs tests/bootcamp/export/verl_checks.py inside .venv-verl
(built by scripts/verl-venv.sh, part of `scripts/install.sh test`, with the simulator extras; verl's
transformers pin conflicts with ours, hence its own venv). Every shipped bootcamp goes through it,
the five simulator environments included. In CI a missing venv fails the test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ..conftest import REPO, require

VENV_PYTHON = Path(os.environ.get("PTBENCH_VERL_VENV", REPO / ".venv-verl")) / "bin" / "python"
EXPECTED = [
    "ptbench's CLI, bootcamp, export and reward modules import without verl",
    "export-verl wrote the suite",
    "initialize_tools_from_config loads tools.yaml",
    "RLHFDataset loads every non-empty split",
    "get_custom_reward_fn (load_extern_object) loads compute_score",
    "arithmetic: BootcampTool create/execute/release",
    "hostile: earlier \\boxed{answer}",
    "hostile: fake turn markers",
    "sql_explore: a temp table made in call 1",
    "mastermind: interaction route",
    "simulator environments: a real tool call and the oracle answer in ptbench_agent",
    "battery under verl: an earlier exact design",
    "tool lifecycle under verl: one create and one release per episode",
]


def test_verl_consumes_bootcamp_data_tools_agent_loop_and_reward(tmp_path: Path) -> None:
    require(VENV_PYTHON.is_file(), f"{VENV_PYTHON} missing; build it with `bash scripts/verl-venv.sh`")
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO / "src"),
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "HF_DATASETS_CACHE": str(tmp_path / "hf-datasets"),
        "RAY_DISABLE_IMPORT_WARNING": "1",
    }
    proc = subprocess.run(
        [str(VENV_PYTHON), str(Path(__file__).with_name("verl_checks.py")), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=tmp_path,
    )
    oks = [line[3:] for line in proc.stdout.splitlines() if line.startswith("ok ")]
    assert proc.returncode == 0 and "ALL OK" in proc.stdout, (
        f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    )
    for want in EXPECTED:
        assert any(line.startswith(want) for line in oks), (want, oks)
    print("\n".join(oks), file=sys.stderr)
