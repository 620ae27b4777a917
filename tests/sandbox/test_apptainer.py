"""The apptainer command line, pinned by golden files (Apptainer cannot run on the development machine,
so the test stops at the seam: the argv and environment handed to `apptainer exec`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ptbench.core.errors import UserError
from ptbench.sandbox import SandboxRequest, build_command

GOLDEN = Path(__file__).parent / "golden"
KEY = "sk-canary-apptainer-0123456789"


def _request(**options) -> SandboxRequest:
    return SandboxRequest(
        argv=["/opt/npm/bin/claude", "--print", "PROMPT"],
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": "/r/c/t/home",
            "LANG": "C.UTF-8",
            "ANTHROPIC_API_KEY": KEY,
            "PTBENCH_TRIAL_DIR": "/r/c/t",
        },
        workspace=Path("/r/c/t/workspace"),
        home=Path("/r/c/t/home"),
        read_only=[Path("/models/qwen3-1.7b")],
        writable=[Path("/scratch/hf")],
        gpus=1,
        options=options,
    )


CASES = {
    "apptainer_gpu": dict(image="/images/ptbench-agents.sif"),
    "apptainer_overlay_binds": dict(
        image="docker://ghcr.io/example/agents:1",
        nv=False,
        binds=["/data:/data:ro", "/scratch/extra"],
        hf_cache_overlay="/images/hf-cache.sqsh",
        hf_home="/hf",
        extra_args=["--cleanenv"],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_apptainer_command_matches_golden(case: str) -> None:
    cmd = build_command("apptainer", _request(**CASES[case]))
    got = (
        json.dumps({"argv": cmd.argv, "env": dict(sorted(cmd.env.items())), "cwd": str(cmd.cwd)}, indent=1).replace(
            KEY, "<KEY>"
        )
        + "\n"
    )
    golden = GOLDEN / f"{case}.json"
    if os.environ.get("PTBENCH_UPDATE_GOLDEN"):
        golden.write_text(got)
    assert got == golden.read_text(), (
        f"apptainer command changed; if intended, rerun with PTBENCH_UPDATE_GOLDEN=1 and review {golden}"
    )
    assert not any(KEY in a for a in cmd.argv), "a key on the command line would show in ps and in logs"
    assert cmd.env["APPTAINERENV_ANTHROPIC_API_KEY"] == KEY and "ANTHROPIC_API_KEY" not in cmd.env


def test_apptainer_needs_an_image() -> None:
    with pytest.raises(UserError, match="sandbox_options.image"):
        build_command("apptainer", _request())


def test_unknown_sandbox_is_a_user_error() -> None:
    with pytest.raises(UserError, match=r"unknown sandbox 'docker' \(known: apptainer, bwrap, none\)"):
        build_command("docker", _request())
